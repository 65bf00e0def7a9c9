//! Backends as a user sees them through one running portcullis: HTTP/2 and TLS toward
//! the servers (an upstream HAProxy plays the servers and says what it was spoken to
//! with), certificate verification, a client certificate presented to servers that ask
//! for one, health checks taking a dead server out of rotation, a server added live
//! being checked like one loaded from the file, and a hashing backend keeping each client
//! on its server through live additions and reloads.

// Test helpers fail loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use test_support::{
    EchoServer, Portcullis, free_port, http_get, http_request, self_signed, tls_secret,
    write_manifest,
};

const BIN: &str = env!("CARGO_BIN_EXE_portcullis");

/// An HAProxy playing the servers: an HTTP/2-only clear-text port, TLS ports, and TLS
/// ports requiring a client certificate signed by `client_ca`, each answering with the
/// HTTP version (over TLS, the SNI; over mutual TLS, the client's name) it was reached with.
struct Upstream {
    child: Child,
    h2c_port: u16,
    tls_port: u16,
    second_tls_port: u16,
    mutual_tls_port: u16,
    second_mutual_tls_port: u16,
}

impl Upstream {
    fn start(dir: &Path, certificate: &str, key: &str, client_ca: &str) -> Self {
        let (h2c_port, tls_port, second_tls_port) = (free_port(), free_port(), free_port());
        let (mutual_tls_port, second_mutual_tls_port) = (free_port(), free_port());
        std::fs::write(dir.join("upstream.pem"), format!("{certificate}{key}")).unwrap();
        std::fs::write(dir.join("client-ca.pem"), client_ca).unwrap();
        let config = format!(
            "global\n    default-path config\n\
             defaults\n    mode http\n    timeout connect 5s\n    timeout client 30s\n    timeout server 30s\n\
             frontend h2c\n    bind 127.0.0.1:{h2c_port} proto h2\n    \
             http-request return status 200 content-type text/plain lf-string \"h2c http/%[fc_http_major]\"\n\
             frontend tls\n    bind 127.0.0.1:{tls_port} ssl crt upstream.pem alpn h2,http/1.1\n    \
             bind 127.0.0.1:{second_tls_port} ssl crt upstream.pem alpn h2,http/1.1\n    \
             http-request return status 200 content-type text/plain lf-string \"tls http/%[fc_http_major] sni=%[ssl_fc_sni] port=%[dst_port]\"\n\
             frontend mutual_tls\n    bind 127.0.0.1:{mutual_tls_port} ssl crt upstream.pem ca-file client-ca.pem verify required\n    \
             bind 127.0.0.1:{second_mutual_tls_port} ssl crt upstream.pem ca-file client-ca.pem verify required\n    \
             http-request return status 200 content-type text/plain lf-string \"client=%[ssl_c_s_dn(cn)] port=%[dst_port]\"\n"
        );
        let path = dir.join("upstream.cfg");
        std::fs::write(&path, config).unwrap();
        let child = Command::new("haproxy")
            .args(["-db", "-f"])
            .arg(&path)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // The controller's HAProxy checks it as soon as it starts.
        for port in [
            h2c_port,
            tls_port,
            second_tls_port,
            mutual_tls_port,
            second_mutual_tls_port,
        ] {
            test_support::wait_for_listener(port);
        }
        Self {
            child,
            h2c_port,
            tls_port,
            second_tls_port,
            mutual_tls_port,
            second_mutual_tls_port,
        }
    }
}

impl Drop for Upstream {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A Service of one port on 127.0.0.1 endpoints, with annotations and an appProtocol.
fn service(name: &str, annotations: &str, app_protocol: Option<&str>, ports: &[u16]) -> String {
    let app_protocol = app_protocol
        .map(|p| format!("\n    appProtocol: {p}"))
        .unwrap_or_default();
    let mut text = format!(
        "---\napiVersion: v1\nkind: Service\nmetadata:\n  name: {name}\n  namespace: default\n  annotations: {{{annotations}}}\nspec:\n  ports:\n  - port: 80{app_protocol}\n"
    );
    for port in ports {
        text.push_str(&format!(
                "---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata:\n  name: {name}-{port}\n  namespace: default\n  labels: {{kubernetes.io/service-name: {name}}}\naddressType: IPv4\nports:\n- {{port: {port}}}\nendpoints:\n- addresses: [127.0.0.1]\n  conditions: {{ready: true}}\n"
        ));
    }
    text
}

fn ingress(name: &str, host: &str, service: &str) -> String {
    format!(
        "---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {{name: {name}, namespace: default}}\nspec:\n  rules:\n  - host: {host}\n    http:\n      paths:\n      - {{path: /, pathType: Prefix, backend: {{service: {{name: {service}, port: {{number: 80}}}}}}}}\n"
    )
}

fn ca_secret(name: &str, certificate: &str) -> String {
    let indented: String = certificate.lines().map(|l| format!("    {l}\n")).collect();
    format!(
        "---\napiVersion: v1\nkind: Secret\nmetadata: {{name: {name}, namespace: default}}\nstringData:\n  ca.crt: |\n{indented}"
    )
}

/// Status and body of `GET /` for `host`, one string to compare.
fn answer(port: u16, host: &str) -> String {
    match http_get(port, host, "/") {
        Ok(r) if r.status == 200 => r.server().unwrap_or(r.body),
        Ok(r) => r.status.to_string(),
        Err(err) => format!("error: {err}"),
    }
}

/// `show servers state` of one backend: server name and operational state (0 down,
/// 2 up), sorted.
fn server_states(admin_socket: &Path, backend: &str) -> Vec<(String, u8)> {
    servers_state_column(admin_socket, backend, 5)
}

/// `show servers state` of one backend: server name and health check state (0 not
/// checked; 6 checked: configured and enabled), sorted.
fn check_states(admin_socket: &Path, backend: &str) -> Vec<(String, u8)> {
    servers_state_column(admin_socket, backend, 13)
}

/// `show servers state` of one backend: server name and the numeric column `column`,
/// sorted.
fn servers_state_column<T: std::str::FromStr + Ord>(
    admin_socket: &Path,
    backend: &str,
    column: usize,
) -> Vec<(String, T)> {
    let Ok(mut stream) = UnixStream::connect(admin_socket) else {
        return Vec::new();
    };
    let _ = stream.write_all(format!("show servers state {backend}\n").as_bytes());
    let mut reply = String::new();
    let _ = stream.read_to_string(&mut reply);
    let mut states: Vec<(String, T)> = reply
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            Some((
                fields.get(3)?.to_string(),
                fields.get(column)?.parse().ok()?,
            ))
        })
        .collect();
    states.sort();
    states
}

fn admin_socket(portcullis: &Portcullis) -> PathBuf {
    portcullis.state_dir.join("run").join("admin.sock")
}

#[test]
fn http2_tls_verification_and_health_checks_work_against_real_servers() {
    let dir = tempfile::tempdir().unwrap();
    let manifests = dir.path().join("manifests");
    std::fs::create_dir_all(&manifests).unwrap();
    let (upstream_cert, upstream_key) = self_signed("backend.test", &["backend.test"]);
    let (other_ca, _) = self_signed("someone-else", &["someone-else.test"]);
    let (client_cert, client_key) = self_signed("portcullis-client", &["client.test"]);
    let upstream = Upstream::start(dir.path(), &upstream_cert, &upstream_key, &client_cert);
    let (alive, doomed) = (
        EchoServer::start("alive").unwrap(),
        EchoServer::start("doomed").unwrap(),
    );
    let dead_port = free_port();

    let checked = |ports: &[u16]| {
        service(
            "checked",
            "portcullis.dev/health-check-interval: 100ms, portcullis.dev/health-check-fall-count: \"1\", portcullis.dev/balance-algorithm: roundrobin",
            None,
            ports,
        )
    };
    let secure = |ports: &[u16]| {
        service(
            "secure",
            // Its HTTP check cannot be one over HTTP/2 and TLS (HAProxy 2.6's never
            // complete): the TLS handshake is checked, and the server stays up.
            "haproxy-ingress.github.io/backend-protocol: h2-ssl, haproxy-ingress.github.io/secure-verify-ca-secret: upstream-ca, haproxy-ingress.github.io/secure-sni: backend.test, haproxy-ingress.github.io/health-check-uri: /healthz, haproxy-ingress.github.io/health-check-interval: 100ms, haproxy-ingress.github.io/health-check-fall-count: \"1\"",
            None,
            ports,
        )
    };
    // HTTP/1.1 over TLS with an HTTP check, which goes over TLS too.
    let verified = |ports: &[u16]| {
        service(
            "verified",
            "haproxy-ingress.github.io/secure-backends: \"true\", haproxy-ingress.github.io/secure-verify-ca-secret: upstream-ca, haproxy-ingress.github.io/secure-sni: backend.test, haproxy-ingress.github.io/health-check-uri: /healthz, haproxy-ingress.github.io/health-check-interval: 100ms, haproxy-ingress.github.io/health-check-fall-count: \"1\"",
            None,
            ports,
        ) + &ingress("verified", "verified.test", "verified")
    };
    let mutual = |ports: &[u16]| {
        service(
            "mutual",
            "haproxy-ingress.github.io/secure-backends: \"true\", haproxy-ingress.github.io/secure-crt-secret: client-cert",
            None,
            ports,
        )
    };
    let fixed = [
        // A client certificate, for servers that require one; and the same server
        // without it.
        tls_secret("default", "client-cert", &client_cert, &client_key),
        ingress("mutual", "mutual-tls.test", "mutual"),
        service(
            "anonymous",
            "haproxy-ingress.github.io/secure-backends: \"true\"",
            None,
            &[upstream.mutual_tls_port],
        ),
        ingress("anonymous", "anonymous-tls.test", "anonymous"),
        // HTTP/2 in clear text, chosen by the Service port's appProtocol.
        service("grpc", "", Some("kubernetes.io/h2c"), &[upstream.h2c_port]),
        ingress("grpc", "h2c.test", "grpc"),
        // HTTP/2 over TLS, verified against the right CA, with a fixed SNI.
        ingress("secure", "tls.test", "secure"),
        ca_secret("upstream-ca", &upstream_cert),
        // The same server, verified against a CA that did not sign it.
        service(
            "mistrusted",
            "ingress.kubernetes.io/secure-backends: \"true\", ingress.kubernetes.io/secure-verify-ca-secret: other-ca, ingress.kubernetes.io/secure-sni: backend.test",
            None,
            &[upstream.tls_port],
        ),
        ingress("mistrusted", "wrong-ca.test", "mistrusted"),
        // A CA that is not a Secret name: no server rather than an unverified one.
        service(
            "misnamed",
            "ingress.kubernetes.io/secure-backends: \"true\", ingress.kubernetes.io/secure-verify-ca-secret: ../upstream-ca",
            None,
            &[upstream.tls_port],
        ),
        ingress("misnamed", "misnamed-ca.test", "misnamed"),
        ca_secret("other-ca", &other_ca),
        ingress("checked", "checked.test", "checked"),
        // Nothing but the defaults: its server lines carry no options at all.
        service("plain", "", None, &[alive.port]),
        ingress("plain", "plain.test", "plain"),
    ]
    .concat();
    write_manifest(&manifests, "fixed.yaml", &fixed).unwrap();
    write_manifest(
        &manifests,
        "checked.yaml",
        &checked(&[alive.port, doomed.port]),
    )
    .unwrap();
    write_manifest(&manifests, "secure.yaml", &secure(&[upstream.tls_port])).unwrap();
    write_manifest(&manifests, "verified.yaml", &verified(&[upstream.tls_port])).unwrap();
    write_manifest(
        &manifests,
        "mutual.yaml",
        &mutual(&[upstream.mutual_tls_port]),
    )
    .unwrap();
    let mut portcullis =
        Portcullis::start(BIN, &manifests, &dir.path().join("state"), &[]).unwrap();
    let port = portcullis.http_port;

    assert_eq!(answer(port, "h2c.test"), "h2c http/2");
    let tls_answer = |p: u16| format!("tls http/2 sni=backend.test port={p}");
    assert_eq!(
        answer(port, "tls.test"),
        tls_answer(upstream.tls_port),
        "{}",
        portcullis.log()
    );
    let mutual_answer = |p: u16| format!("client=portcullis-client port={p}");
    assert_eq!(
        answer(port, "mutual-tls.test"),
        mutual_answer(upstream.mutual_tls_port)
    );
    // Without the certificate the server answers nothing: the request fails (502; TLS
    // 1.3 refuses it after the handshake), or the health check has already taken the
    // server out (503).
    let anonymous = answer(port, "anonymous-tls.test");
    assert!(matches!(anonymous.as_str(), "502" | "503"), "{anonymous}");
    assert_eq!(answer(port, "wrong-ca.test"), "503");
    assert_eq!(answer(port, "misnamed-ca.test"), "503");
    assert!(
        portcullis.log().contains("Service default/misnamed: metadata.annotations[ingress.kubernetes.io/secure-verify-ca-secret]: invalid value: "),
        "{}",
        portcullis.log()
    );
    // A backend with the default settings takes its servers' health check from the
    // `defaults` section, as one with settings of its own takes it from its section.
    let socket = admin_socket(&portcullis);
    let alive_name = format!("127.0.0.1_{}", alive.port);
    assert_eq!(answer(port, "plain.test"), "alive");
    let checked_servers = |backend: &str| check_states(&socket, backend);
    assert_eq!(
        checked_servers("default_plain_80"),
        [(alive_name.clone(), 6)]
    );
    assert_eq!(
        checked_servers("default_grpc_80"),
        [(format!("127.0.0.1_{}", upstream.h2c_port), 6)]
    );
    // The HTTP/2-over-TLS backend's check (its TLS handshake) keeps its server up, past
    // the time its first checks take.
    std::thread::sleep(Duration::from_millis(1500));
    let secure_server = format!("127.0.0.1_{}", upstream.tls_port);
    assert_eq!(
        server_states(&socket, "default_secure_80"),
        [(secure_server, 2)],
        "the server is up"
    );
    assert_eq!(answer(port, "tls.test"), tls_answer(upstream.tls_port));

    // A server that stops answering is taken out by its health check, and no request
    // goes to it any more.
    let doomed_name = format!("127.0.0.1_{}", doomed.port);
    drop(doomed);
    portcullis
        .wait_until(Duration::from_secs(10), |_| {
            server_states(&socket, "default_checked_80").contains(&(doomed_name.clone(), 0))
        })
        .unwrap();
    for _ in 0..6 {
        assert_eq!(answer(port, "checked.test"), "alive");
    }

    // A server added live is checked like one from the file: one that never answers
    // goes down, without a reload.
    let reloads = portcullis.metric_total("portcullis_reloads_total");
    write_manifest(
        &manifests,
        "checked.yaml",
        &checked(&[alive.port, dead_port]),
    )
    .unwrap();
    let dead_name = format!("127.0.0.1_{dead_port}");
    portcullis
        .wait_until(Duration::from_secs(10), |_| {
            let states = server_states(&socket, "default_checked_80");
            states.contains(&(dead_name.clone(), 0)) && states.contains(&(alive_name.clone(), 2))
        })
        .unwrap();
    assert_eq!(portcullis.metric_total("portcullis_reloads_total"), reloads);
    for _ in 0..6 {
        assert_eq!(answer(port, "checked.test"), "alive");
    }

    // A TLS server added live verifies its certificate with the CA HAProxy loaded.
    write_manifest(
        &manifests,
        "secure.yaml",
        &secure(&[upstream.tls_port, upstream.second_tls_port]),
    )
    .unwrap();
    portcullis
        .wait_until(Duration::from_secs(10), |p| {
            (0..4).any(|_| answer(p.http_port, "tls.test") == tls_answer(upstream.second_tls_port))
        })
        .unwrap();
    assert_eq!(portcullis.metric_total("portcullis_reloads_total"), reloads);

    // A TLS server added live is health-checked over TLS, as one from the file is (a
    // clear-text check of a TLS server fails, and takes it out).
    let verified_server = |p: u16| (format!("127.0.0.1_{p}"), 2);
    portcullis
        .wait_until(Duration::from_secs(10), |_| {
            server_states(&socket, "default_verified_80") == [verified_server(upstream.tls_port)]
        })
        .unwrap();
    write_manifest(
        &manifests,
        "verified.yaml",
        &verified(&[upstream.tls_port, upstream.second_tls_port]),
    )
    .unwrap();
    portcullis
        .wait_until(Duration::from_secs(10), |_| {
            server_states(&socket, "default_verified_80").len() == 2
        })
        .unwrap();
    // Past the checks that would take it out (every 100 ms, out at the first failure).
    std::thread::sleep(Duration::from_millis(1000));
    let mut both = vec![
        verified_server(upstream.tls_port),
        verified_server(upstream.second_tls_port),
    ];
    both.sort();
    assert_eq!(server_states(&socket, "default_verified_80"), both);
    assert_eq!(portcullis.metric_total("portcullis_reloads_total"), reloads);

    // A server added live presents the client certificate HAProxy loaded.
    write_manifest(
        &manifests,
        "mutual.yaml",
        &mutual(&[upstream.mutual_tls_port, upstream.second_mutual_tls_port]),
    )
    .unwrap();
    portcullis
        .wait_until(Duration::from_secs(10), |p| {
            (0..4).any(|_| {
                answer(p.http_port, "mutual-tls.test")
                    == mutual_answer(upstream.second_mutual_tls_port)
            })
        })
        .unwrap();
    assert_eq!(portcullis.metric_total("portcullis_reloads_total"), reloads);
}

/// Which server each of 40 users reaches on `host` (balanced by their `X-User` header).
fn servers_of_users(port: u16, host: &str) -> Vec<String> {
    (1..=40)
        .map(|user| {
            let request = format!(
                "GET / HTTP/1.1\r\nHost: {host}\r\nX-User: u{user}\r\nConnection: close\r\n\r\n"
            );
            match http_request(port, &request) {
                Ok(response) => response.server().unwrap_or(response.status.to_string()),
                Err(err) => format!("error: {err}"),
            }
        })
        .collect()
}

/// `show servers state` of one backend: each server's name and id, sorted.
fn server_ids(admin_socket: &Path, backend: &str) -> Vec<(String, u32)> {
    servers_state_column(admin_socket, backend, 2)
}

#[test]
fn a_hashing_backend_keeps_each_client_on_its_server_through_live_additions_and_reloads() {
    let dir = tempfile::tempdir().unwrap();
    let manifests = dir.path().join("manifests");
    std::fs::create_dir_all(&manifests).unwrap();
    let servers = [
        EchoServer::start("one").unwrap(),
        EchoServer::start("two").unwrap(),
        EchoServer::start("three").unwrap(),
    ];
    let hashed = |count: usize| {
        let ports: Vec<u16> = servers[..count].iter().map(|s| s.port).collect();
        service(
            "hashed",
            "portcullis.dev/balance-algorithm: \"hdr(X-User)\"",
            None,
            &ports,
        ) + &ingress("hashed", "hashed.test", "hashed")
    };
    write_manifest(&manifests, "hashed.yaml", &hashed(1)).unwrap();
    let mut portcullis =
        Portcullis::start(BIN, &manifests, &dir.path().join("state"), &[]).unwrap();
    let socket = admin_socket(&portcullis);
    let backend = "default_hashed_80";

    // Two servers come: added live, each with the id its name gives it.
    write_manifest(&manifests, "hashed.yaml", &hashed(3)).unwrap();
    portcullis
        .wait_until(Duration::from_secs(20), |_| {
            server_ids(&socket, backend).len() == 3
        })
        .unwrap();
    assert!(
        portcullis.log().contains("applied live"),
        "{}",
        portcullis.log()
    );
    let live_ids = server_ids(&socket, backend);
    let before = servers_of_users(portcullis.http_port, "hashed.test");
    for server in ["one", "two", "three"] {
        assert!(before.iter().any(|s| s == server), "{server}: {before:?}");
    }

    // An unrelated Service and Ingress: a reload, whose file gives the same servers the
    // same ids, so no user moves.
    let reloads = portcullis.log().matches("haproxy reloaded").count();
    write_manifest(
        &manifests,
        "other.yaml",
        &(service("other", "", None, &[servers[0].port])
            + &ingress("other", "other.test", "other")),
    )
    .unwrap();
    portcullis
        .wait_until(Duration::from_secs(20), |p| {
            answer(p.http_port, "other.test") == "one"
                && p.log().matches("haproxy reloaded").count() > reloads
        })
        .unwrap();
    assert_eq!(server_ids(&socket, backend), live_ids);
    assert_eq!(
        servers_of_users(portcullis.http_port, "hashed.test"),
        before
    );
}
