//! Sticky sessions and the PROXY protocol through one running portcullis: a client keeps
//! its server while servers are added live, and after a reload; a proxy in front tells
//! the client's address with the PROXY protocol (version 1 or 2) while other clients
//! cannot; servers that require the PROXY protocol get it, also when added live.

// Test helpers fail loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::time::Duration;

use test_support::{EchoServer, Portcullis, Response, exchange, http_request, write_manifest};

const BIN: &str = env!("CARGO_BIN_EXE_portcullis");

/// The one source the frontends trust to send the PROXY protocol.
const TRUSTED_PROXY: Ipv4Addr = Ipv4Addr::new(127, 0, 0, 2);

/// A Service of one port on 127.0.0.1 endpoints, with annotations.
fn service(name: &str, annotations: &str, ports: &[u16]) -> String {
    let mut text = format!(
        "---\napiVersion: v1\nkind: Service\nmetadata:\n  name: {name}\n  namespace: default\n  annotations: {{{annotations}}}\nspec:\n  ports:\n  - port: 80\n"
    );
    for port in ports {
        text.push_str(&format!(
            "---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata:\n  name: {name}-{port}\n  namespace: default\n  labels: {{kubernetes.io/service-name: {name}}}\naddressType: IPv4\nports:\n- {{port: {port}}}\nendpoints:\n- addresses: [127.0.0.1]\n  conditions: {{ready: true}}\n"
        ));
    }
    text
}

fn ingress(name: &str) -> String {
    format!(
        "---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {{name: {name}, namespace: default}}\nspec:\n  rules:\n  - host: {name}.test\n    http:\n      paths:\n      - {{path: /, pathType: Prefix, backend: {{service: {{name: {name}, port: {{number: 80}}}}}}}}\n"
    )
}

/// `GET /` for `host`, with a cookie if given, from 127.0.0.1.
fn get(port: u16, host: &str, cookie: Option<&str>) -> Response {
    let cookie = cookie
        .map(|c| format!("Cookie: {c}\r\n"))
        .unwrap_or_default();
    http_request(
        port,
        &format!("GET / HTTP/1.1\r\nHost: {host}\r\n{cookie}Connection: close\r\n\r\n"),
    )
    .unwrap()
}

/// The echo backend that answered, and the cookie it was given (`name=value`), if any.
fn sticky_get(port: u16, host: &str, cookie: Option<&str>) -> (String, Option<String>) {
    let response = get(port, host, cookie);
    let set = response
        .headers
        .get("set-cookie")
        .map(|c| c.split(';').next().unwrap_or_default().to_owned());
    (response.server().unwrap_or_default(), set)
}

/// Sends `header` then `GET /` for `host` from `source`.
fn through_proxy(
    source: Ipv4Addr,
    port: u16,
    header: &[u8],
    host: &str,
) -> std::io::Result<Response> {
    let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None)?;
    socket.bind(&SocketAddr::from((source, 0)).into())?;
    socket.connect(&SocketAddr::from((Ipv4Addr::LOCALHOST, port)).into())?;
    let mut bytes = header.to_vec();
    bytes.extend_from_slice(
        format!("GET / HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n").as_bytes(),
    );
    exchange(TcpStream::from(socket), &bytes)
}

/// A PROXY protocol version 1 header from `client`.
fn proxy_v1(client: Ipv4Addr, port: u16) -> Vec<u8> {
    format!("PROXY TCP4 {client} 127.0.0.1 40000 {port}\r\n").into_bytes()
}

const V2_SIGNATURE: &[u8; 12] = b"\r\n\r\n\0\r\nQUIT\n";

/// A PROXY protocol version 2 header from `client`.
fn proxy_v2(client: Ipv4Addr, port: u16) -> Vec<u8> {
    let mut header = V2_SIGNATURE.to_vec();
    header.extend_from_slice(&[0x21, 0x11, 0, 12]);
    header.extend_from_slice(&client.octets());
    header.extend_from_slice(&Ipv4Addr::LOCALHOST.octets());
    header.extend_from_slice(&40000u16.to_be_bytes());
    header.extend_from_slice(&port.to_be_bytes());
    header
}

/// A server that requires the PROXY protocol: it answers `<name>: <version> <client
/// address>`, or `<name>: none` when a connection starts without a header.
struct ProxyProtocolServer {
    port: u16,
}

impl ProxyProtocolServer {
    fn start(name: &'static str) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                std::thread::spawn(move || serve_after_proxy_header(stream, name));
            }
        });
        Self { port }
    }
}

fn serve_after_proxy_header(stream: TcpStream, name: &str) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let mut reader = BufReader::new(stream);
    let Ok(start) = reader.fill_buf().map(<[u8]>::to_vec) else {
        return;
    };
    let seen = if start.starts_with(b"PROXY ") {
        let mut line = String::new();
        let _ = reader.read_line(&mut line);
        // PROXY TCP4 <source> <destination> <source port> <destination port>
        format!("v1 {}", line.split_whitespace().nth(2).unwrap_or("unknown"))
    } else if start.starts_with(&V2_SIGNATURE[..4]) {
        let mut fixed = [0u8; 16];
        if reader.read_exact(&mut fixed).is_err() || &fixed[..12] != V2_SIGNATURE {
            return;
        }
        let mut rest = vec![0u8; usize::from(u16::from_be_bytes([fixed[14], fixed[15]]))];
        if reader.read_exact(&mut rest).is_err() {
            return;
        }
        match (fixed[13], rest.get(..4)) {
            (0x11, Some(&[a, b, c, d])) => format!("v2 {}", Ipv4Addr::new(a, b, c, d)),
            _ => "v2 local".to_owned(),
        }
    } else {
        "none".to_owned()
    };
    // The request head, then one answer; a health check closes before sending one.
    let mut line = String::new();
    loop {
        line.clear();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) if line == "\r\n" => break,
            Ok(_) => {}
        }
    }
    let seen = format!("{name}: {seen}");
    let mut stream = reader.into_inner();
    let _ = write!(
        stream,
        "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{seen}",
        seen.len()
    );
}

fn global_config(manifests: &Path) {
    write_manifest(
        manifests,
        "global.yaml",
        "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: global, namespace: ops}\ndata: {use-proxy-protocol: \"true\", use-proxy-protocol-trusted-cidrs: \"127.0.0.2\"}\n",
    )
    .unwrap();
}

#[test]
fn sticky_sessions_and_the_proxy_protocol_through_a_real_haproxy() {
    let dir = tempfile::tempdir().unwrap();
    let manifests = dir.path().join("manifests");
    std::fs::create_dir_all(&manifests).unwrap();
    global_config(&manifests);
    let [a, b, c] = ["a", "b", "c"].map(|name| EchoServer::start(name).unwrap());
    let [v1_server, v2_server, added_v2_server] =
        ["first", "first", "added"].map(ProxyProtocolServer::start);
    let sticky = |ports: &[u16]| service("sticky", "portcullis.dev/affinity: cookie", ports);
    let named = |ports: &[u16]| {
        service(
            "named",
            "haproxy-ingress.github.io/affinity: cookie, haproxy-ingress.github.io/session-cookie-dynamic: \"false\", haproxy-ingress.github.io/session-cookie-name: sid",
            ports,
        )
    };
    let sends_v2 = |ports: &[u16]| service("v2", "portcullis.dev/proxy-protocol: v2", ports);
    write_manifest(
        &manifests,
        "sticky.yaml",
        &(sticky(&[a.port, b.port]) + &ingress("sticky")),
    )
    .unwrap();
    write_manifest(
        &manifests,
        "named.yaml",
        &(named(&[a.port]) + &ingress("named")),
    )
    .unwrap();
    write_manifest(
        &manifests,
        "v2.yaml",
        &(sends_v2(&[v2_server.port]) + &ingress("v2")),
    )
    .unwrap();
    write_manifest(
        &manifests,
        "v1.yaml",
        &(service(
            "v1",
            "ingress.kubernetes.io/proxy-protocol: v1",
            &[v1_server.port],
        ) + &ingress("v1")),
    )
    .unwrap();
    let mut portcullis = Portcullis::start(
        BIN,
        &manifests,
        &dir.path().join("state"),
        &["--configmap", "ops/global"],
    )
    .unwrap();
    let port = portcullis.http_port;

    // A client keeps the server its cookie names; it is given the cookie once.
    let (first, cookie) = sticky_get(port, "sticky.test", None);
    let cookie = cookie.unwrap_or_else(|| panic!("no cookie; {}", portcullis.log()));
    for _ in 0..6 {
        assert_eq!(
            sticky_get(port, "sticky.test", Some(&cookie)),
            (first.clone(), None)
        );
    }

    // A server added live gets a cookie, derived from its address, and the old client
    // keeps its server; no reload.
    let reloads = portcullis.metric_total("portcullis_reloads_total");
    write_manifest(
        &manifests,
        "sticky.yaml",
        &(sticky(&[a.port, b.port, c.port]) + &ingress("sticky")),
    )
    .unwrap();
    let added_cookie = std::cell::RefCell::new(None);
    portcullis
        .wait_until(Duration::from_secs(10), |p| {
            (0..8).any(|_| match sticky_get(p.http_port, "sticky.test", None) {
                (server, Some(cookie)) if server == "c" => {
                    *added_cookie.borrow_mut() = Some(cookie);
                    true
                }
                _ => false,
            })
        })
        .unwrap();
    let added_cookie = added_cookie.into_inner().unwrap();
    let value = added_cookie.strip_prefix("INGRESSCOOKIE=").unwrap();
    assert!(
        value.len() == 16 && value.bytes().all(|b| b.is_ascii_hexdigit()),
        "{added_cookie}"
    );
    assert_eq!(portcullis.metric_total("portcullis_reloads_total"), reloads);
    for _ in 0..6 {
        assert_eq!(
            sticky_get(port, "sticky.test", Some(&cookie)),
            (first.clone(), None)
        );
        assert_eq!(
            sticky_get(port, "sticky.test", Some(&added_cookie)),
            ("c".to_owned(), None)
        );
    }

    // Cookies that name the server are on its line, which `add server` does not take:
    // a server added there costs a reload, and gets its cookie.
    write_manifest(
        &manifests,
        "named.yaml",
        &(named(&[a.port, b.port]) + &ingress("named")),
    )
    .unwrap();
    portcullis
        .wait_until(Duration::from_secs(10), |p| {
            p.metric_total("portcullis_reloads_total") > reloads
        })
        .unwrap();
    let b_cookie = format!("sid=127.0.0.1_{}", b.port);
    portcullis
        .wait_until(Duration::from_secs(10), |p| {
            sticky_get(p.http_port, "named.test", Some(&b_cookie)).0 == "b"
        })
        .unwrap();

    // After that reload, the live-added server's cookie is still its own: HAProxy
    // derived the same value from the file as it did live.
    assert_eq!(
        sticky_get(port, "sticky.test", Some(&added_cookie)),
        ("c".to_owned(), None)
    );
    assert_eq!(
        sticky_get(port, "sticky.test", Some(&cookie)),
        (first.clone(), None)
    );

    // The trusted proxy tells the client's address, in either version; HAProxy
    // forwards it, and sends it on to servers that want the PROXY protocol.
    let client = Ipv4Addr::new(203, 0, 113, 7);
    for header in [proxy_v1(client, port), proxy_v2(client, port)] {
        let reply = through_proxy(TRUSTED_PROXY, port, &header, "sticky.test").unwrap();
        let echo = reply.echo().unwrap();
        assert_eq!(echo["headers"]["x-forwarded-for"], "203.0.113.7", "{echo}");
        assert_eq!(echo["headers"]["x-real-ip"], "203.0.113.7", "{echo}");
        let reply = through_proxy(TRUSTED_PROXY, port, &header, "v2.test").unwrap();
        assert_eq!(reply.body, "first: v2 203.0.113.7");
    }
    assert_eq!(get(port, "v1.test", None).body, "first: v1 127.0.0.1");
    assert_eq!(get(port, "v2.test", None).body, "first: v2 127.0.0.1");
    // Anyone else cannot claim an address, and the trusted proxy must send one.
    let spoofed = through_proxy(
        Ipv4Addr::LOCALHOST,
        port,
        &proxy_v1(client, port),
        "sticky.test",
    );
    assert_eq!(spoofed.map(|r| r.status).ok(), Some(400));
    assert!(
        through_proxy(TRUSTED_PROXY, port, b"", "sticky.test").is_err(),
        "a trusted source without a header was served"
    );

    // A server added live is sent the PROXY protocol too.
    let reloads = portcullis.metric_total("portcullis_reloads_total");
    write_manifest(
        &manifests,
        "v2.yaml",
        &(sends_v2(&[v2_server.port, added_v2_server.port]) + &ingress("v2")),
    )
    .unwrap();
    portcullis
        .wait_until(Duration::from_secs(10), |p| {
            (0..8).any(|_| {
                let header = proxy_v2(client, p.http_port);
                through_proxy(TRUSTED_PROXY, p.http_port, &header, "v2.test")
                    .is_ok_and(|r| r.body == "added: v2 203.0.113.7")
            })
        })
        .unwrap();
    assert_eq!(portcullis.metric_total("portcullis_reloads_total"), reloads);
}

#[test]
fn without_trusted_sources_every_client_must_send_the_proxy_protocol() {
    let dir = tempfile::tempdir().unwrap();
    let manifests = dir.path().join("manifests");
    std::fs::create_dir_all(&manifests).unwrap();
    write_manifest(
        &manifests,
        "global.yaml",
        "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: global, namespace: ops}\ndata: {use-proxy-protocol: \"true\"}\n",
    )
    .unwrap();
    let web = EchoServer::start("web").unwrap();
    write_manifest(
        &manifests,
        "web.yaml",
        &(service("web", "", &[web.port]) + &ingress("web")),
    )
    .unwrap();
    let portcullis = Portcullis::start(
        BIN,
        &manifests,
        &dir.path().join("state"),
        &["--configmap", "ops/global"],
    )
    .unwrap();
    let port = portcullis.http_port;
    let client = Ipv4Addr::new(198, 51, 100, 9);
    let reply = through_proxy(
        Ipv4Addr::LOCALHOST,
        port,
        &proxy_v2(client, port),
        "web.test",
    )
    .unwrap();
    let echo = reply.echo().unwrap();
    assert_eq!(echo["headers"]["x-real-ip"], "198.51.100.9", "{echo}");
    assert!(
        http_request(
            port,
            "GET / HTTP/1.1\r\nHost: web.test\r\nConnection: close\r\n\r\n"
        )
        .is_err(),
        "a client without a header was served"
    );
}
