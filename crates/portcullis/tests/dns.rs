//! Servers HAProxy finds by name, through a real HAProxy: an ExternalName Service
//! resolved when HAProxy loads its configuration, and a backend resolved continuously
//! through a `resolvers` section (`use-resolver`), here against a small DNS server on
//! 127.0.0.1 that answers every A question with 127.0.0.1.

// Test helpers fail loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::net::UdpSocket;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use test_support::{EchoServer, Portcullis};

const BIN: &str = env!("CARGO_BIN_EXE_portcullis");

fn ingress(name: &str, host: &str, service: &str, port: u16, annotations: &str) -> String {
    format!(
        "---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: {name}\n  namespace: default\n  annotations: {{{annotations}}}\nspec:\n  rules:\n  - host: {host}\n    http:\n      paths:\n      - {{path: /, pathType: Prefix, backend: {{service: {{name: {service}, port: {{number: {port}}}}}}}}}\n"
    )
}

/// A DNS server on 127.0.0.1 answering every question for an A record with 127.0.0.1
/// (and any other question with no record); it remembers the names asked.
struct FakeDns {
    port: u16,
    asked: Arc<Mutex<Vec<String>>>,
    stop: Arc<AtomicBool>,
}

impl FakeDns {
    fn start() -> Self {
        let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
        socket
            .set_read_timeout(Some(Duration::from_millis(200)))
            .unwrap();
        let port = socket.local_addr().unwrap().port();
        let asked = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (names, flag) = (asked.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut buffer = [0u8; 1500];
            while !flag.load(Ordering::SeqCst) {
                let Ok((length, from)) = socket.recv_from(&mut buffer) else {
                    continue;
                };
                if let Some((name, reply)) = answer(&buffer[..length]) {
                    names.lock().unwrap().push(name);
                    let _ = socket.send_to(&reply, from);
                }
            }
        });
        Self { port, asked, stop }
    }

    fn asked(&self) -> Vec<String> {
        self.asked.lock().unwrap().clone()
    }
}

impl Drop for FakeDns {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

/// The name asked and the reply: the question echoed, and one A record for 127.0.0.1
/// when it asks for A (type 1) records.
fn answer(query: &[u8]) -> Option<(String, Vec<u8>)> {
    let mut labels = Vec::new();
    let mut at = 12;
    loop {
        let length = usize::from(*query.get(at)?);
        at += 1;
        if length == 0 {
            break;
        }
        labels.push(String::from_utf8_lossy(query.get(at..at + length)?).into_owned());
        at += length;
    }
    let question_end = at + 4;
    let question = query.get(12..question_end)?;
    let qtype = u16::from_be_bytes([query[at], query[at + 1]]);
    let is_a = qtype == 1;
    let mut reply = Vec::with_capacity(question_end + 16);
    reply.extend_from_slice(&query[0..2]);
    // A response, authoritative, recursion available, no error.
    reply.extend_from_slice(&[0x85, 0x80]);
    reply.extend_from_slice(&[0, 1, 0, u8::from(is_a), 0, 0, 0, 0]);
    reply.extend_from_slice(question);
    if is_a {
        // The name by pointer to the question, type A, class IN, TTL 1 s, 127.0.0.1.
        reply.extend_from_slice(&[0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 1, 0, 4, 127, 0, 0, 1]);
    }
    Some((labels.join("."), reply))
}

#[test]
fn an_external_name_service_and_a_resolved_backend_are_served() {
    let dir = tempfile::tempdir().unwrap();
    let manifests = dir.path().join("manifests");
    std::fs::create_dir_all(&manifests).unwrap();
    let (external, resolved) = (
        EchoServer::start("external").unwrap(),
        EchoServer::start("resolved").unwrap(),
    );
    let dns = FakeDns::start();
    let mut text = format!(
        "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: global, namespace: ops}}\ndata:\n  dns-resolvers: |\n    local=127.0.0.1:{}\n  dns-hold-valid: 1s\n",
        dns.port
    );
    // An ExternalName Service: its name resolves through /etc/hosts when HAProxy loads.
    text += &format!(
        "---\napiVersion: v1\nkind: Service\nmetadata: {{name: ext, namespace: default}}\nspec:\n  type: ExternalName\n  externalName: localhost\n  ports: [{{port: {}}}]\n",
        external.port
    );
    text += &ingress("ext", "ext.test", "ext", external.port, "");
    // A headless Service resolved through the `local` resolver.
    text += &format!(
        "---\napiVersion: v1\nkind: Service\nmetadata: {{name: web, namespace: default}}\nspec:\n  clusterIP: None\n  ports: [{{port: 80}}]\n---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {{name: web-1, namespace: default, labels: {{kubernetes.io/service-name: web}}}}\naddressType: IPv4\nports: [{{port: {}}}]\nendpoints:\n- addresses: [127.0.0.9]\n",
        resolved.port
    );
    text += &ingress(
        "web",
        "web.test",
        "web",
        80,
        "haproxy-ingress.github.io/use-resolver: local",
    );
    test_support::write_manifest(&manifests, "all.yaml", &text).unwrap();
    let mut portcullis = Portcullis::start(
        BIN,
        &manifests,
        &dir.path().join("state"),
        &["--configmap", "ops/global"],
    )
    .unwrap();
    portcullis
        .wait_until(Duration::from_secs(10), |p| {
            test_support::answer(p.http_port, "ext.test", "/") == "external"
        })
        .unwrap_or_else(|err| panic!("{err}\n{}", portcullis.log()));
    // The endpoint's own address (127.0.0.9) is not used: HAProxy asks the resolver.
    portcullis
        .wait_until(Duration::from_secs(15), |p| {
            test_support::answer(p.http_port, "web.test", "/") == "resolved"
        })
        .unwrap_or_else(|err| panic!("{err}\n{:?}\n{}", dns.asked(), portcullis.log()));
    eprintln!("names asked: {:?}", dns.asked());
    assert!(
        dns.asked()
            .iter()
            .any(|name| name == "web.default.svc.cluster.local"),
        "{:?}",
        dns.asked()
    );
    let config = std::fs::read_to_string(portcullis.state_dir.join("haproxy.cfg")).unwrap();
    assert!(
        config.contains("\nresolvers local\n    nameserver ns01 127.0.0.1:"),
        "{config}"
    );
}
