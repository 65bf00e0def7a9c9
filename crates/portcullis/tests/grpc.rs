//! GRPCRoute through a real HAProxy: gRPC unary calls over HTTP/2 without TLS to the
//! HTTP frontend, routed by service, method and header to two gRPC servers that speak
//! HTTP/2 without TLS (h2c) on 127.0.0.1, with header filters, the 404 (UNIMPLEMENTED) of
//! a call no rule takes, the 503 (UNAVAILABLE) of a rule without a valid backend, an
//! HTTPRoute refused for sharing the GRPCRoute's hostname, a change applied live; and a
//! Service whose port says `https` reached over TLS with ALPN `h2`; and an Ingress backend
//! with `backend-protocol: h2` carrying a unary call and its trailers.

// Test helpers fail loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use bytes::{Bytes, BytesMut};
use test_support::{Portcullis, backend, http_get};
use tokio::net::{TcpListener, TcpStream};

/// A gRPC message: uncompressed flag, big-endian length, payload.
fn grpc_frame(payload: &[u8]) -> Bytes {
    let mut frame = BytesMut::with_capacity(payload.len() + 5);
    frame.extend_from_slice(&[0]);
    let length = u32::try_from(payload.len()).unwrap();
    frame.extend_from_slice(&length.to_be_bytes());
    frame.extend_from_slice(payload);
    frame.freeze()
}

/// The payload of one gRPC message.
fn grpc_payload(frame: &[u8]) -> &[u8] {
    assert!(
        frame.len() >= 5,
        "a gRPC message has a 5-byte prefix: {frame:?}"
    );
    let length = u32::from_be_bytes([frame[1], frame[2], frame[3], frame[4]]) as usize;
    &frame[5..5 + length]
}

/// Reads a whole body.
async fn read_body(body: &mut h2::RecvStream) -> Vec<u8> {
    let mut data = Vec::new();
    while let Some(chunk) = body.data().await {
        let chunk = chunk.unwrap();
        body.flow_control().release_capacity(chunk.len()).unwrap();
        data.extend_from_slice(&chunk);
    }
    data
}

/// A gRPC server over HTTP/2 without TLS: every call is answered "<name>: <request>
/// <path> x-route=<header>" with the trailer `grpc-status: 0`. It speaks nothing but
/// HTTP/2, so a call reaching it proves HAProxy forwarded over HTTP/2.
async fn serve(listener: TcpListener, name: &'static str) {
    loop {
        let Ok((socket, _)) = listener.accept().await else {
            return;
        };
        tokio::spawn(async move {
            let Ok(mut connection) = h2::server::handshake(socket).await else {
                return;
            };
            while let Some(Ok((request, mut respond))) = connection.accept().await {
                tokio::spawn(async move {
                    let (parts, mut body) = request.into_parts();
                    let message = read_body(&mut body).await;
                    let header = |name: &str| {
                        parts
                            .headers
                            .get(name)
                            .and_then(|v| v.to_str().ok())
                            .unwrap_or("none")
                            .to_owned()
                    };
                    let answer = format!(
                        "{name}: {} {} x-route={}",
                        String::from_utf8_lossy(grpc_payload(&message)),
                        parts.uri.path(),
                        header("x-route"),
                    );
                    let response = http::Response::builder()
                        .status(200)
                        .header("content-type", "application/grpc")
                        .body(())
                        .unwrap();
                    let mut stream = respond.send_response(response, false).unwrap();
                    stream
                        .send_data(grpc_frame(answer.as_bytes()), false)
                        .unwrap();
                    let mut trailers = http::HeaderMap::new();
                    trailers.insert("grpc-status", http::HeaderValue::from_static("0"));
                    stream.send_trailers(trailers).unwrap();
                });
            }
        });
    }
}

/// What a unary call through the proxy got back.
#[derive(Debug)]
struct Answer {
    status: u16,
    /// The response message (empty unless the status is 200).
    message: String,
    /// `grpc-status` from the trailers, if any.
    grpc_status: Option<String>,
    /// The response's `x-served-by` header, if any.
    served_by: Option<String>,
}

/// One unary call of `path` on `host` through the proxy's HTTP frontend, with extra
/// request metadata.
async fn call(port: u16, host: &str, path: &str, metadata: &[(&str, &str)]) -> Answer {
    let socket = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let (client, connection) = h2::client::handshake(socket).await.unwrap();
    tokio::spawn(async move {
        let _ = connection.await;
    });
    let mut client = client.ready().await.unwrap();
    let mut request = http::Request::builder()
        .method("POST")
        .uri(format!("http://{host}{path}"))
        .header("content-type", "application/grpc")
        .header("te", "trailers");
    for (name, value) in metadata {
        request = request.header(*name, *value);
    }
    let (response, mut stream) = client
        .send_request(request.body(()).unwrap(), false)
        .unwrap();
    // HAProxy may answer (404, 503) and close the stream before the request's message is
    // sent; the response below is what the test asserts, so a refused send is not an error.
    let _ = stream.send_data(grpc_frame(b"portcullis"), true);
    let response = response.await.unwrap();
    let status = response.status().as_u16();
    let served_by = response
        .headers()
        .get("x-served-by")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let mut body = response.into_body();
    let data = read_body(&mut body).await;
    let trailers = body.trailers().await.unwrap().unwrap_or_default();
    let message = if status == 200 && !data.is_empty() {
        String::from_utf8_lossy(grpc_payload(&data)).into_owned()
    } else {
        String::new()
    };
    Answer {
        status,
        message,
        grpc_status: trailers
            .get("grpc-status")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned),
        served_by,
    }
}

const ROUTES: &str = r#"
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: portcullis}
spec: {controllerName: portcullis.dev/gateway-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: edge, namespace: default}
spec:
  gatewayClassName: portcullis
  listeners: [{name: http, protocol: HTTP, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: GRPCRoute
metadata: {name: greeter, namespace: default, creationTimestamp: "2026-01-01T00:00:00Z"}
spec:
  parentRefs: [{name: edge}]
  hostnames: [grpc.test]
  rules:
  - matches: [{method: {service: greet.Greeter, method: Hello}}]
    backendRefs: [{name: greeter-v1, port: 50051}]
  - matches: [{method: {service: greet.Greeter, method: Hello}, headers: [{name: x-canary, value: "yes"}]}]
    backendRefs: [{name: greeter-v2, port: 50051}]
  - matches: [{method: {service: greet.Greeter}}]
    filters:
    - {type: RequestHeaderModifier, requestHeaderModifier: {set: [{name: x-route, value: any-method}]}}
    - {type: ResponseHeaderModifier, responseHeaderModifier: {set: [{name: x-served-by, value: portcullis}]}}
    backendRefs: [{name: greeter-v2, port: 50051}]
  - matches: [{method: {type: RegularExpression, service: "admin\\..*"}}]
    backendRefs: [{name: greeter-v1, port: 50051}]
  - matches: [{method: {service: gone.Service}}]
    backendRefs: [{name: gone, port: 50051}]
  - matches: [{method: {service: health.Health, method: Check}}]
    backendRefs: [{name: greeter-v1, port: 50051, weight: 1}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: website, namespace: default, creationTimestamp: "2026-02-01T00:00:00Z"}
spec:
  parentRefs: [{name: edge}]
  hostnames: [grpc.test]
  rules: [{backendRefs: [{name: greeter-v1, port: 50051}]}]
"#;

#[test]
fn grpc_calls_are_routed_by_service_method_and_header_to_h2c_backends() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let mut ports = Vec::new();
    for name in ["v1", "v2"] {
        let listener = runtime
            .block_on(TcpListener::bind(("127.0.0.1", 0)))
            .unwrap();
        ports.push(listener.local_addr().unwrap().port());
        runtime.spawn(serve(listener, name));
    }

    let dir = tempfile::tempdir().unwrap();
    let manifests = dir.path().join("manifests");
    std::fs::create_dir(&manifests).unwrap();
    let mut objects = backend("default", "greeter-v1", 50051, None, &[(ports[0], true)]);
    objects += &backend("default", "greeter-v2", 50051, None, &[(ports[1], true)]);
    objects += ROUTES;
    std::fs::write(manifests.join("all.yaml"), objects).unwrap();
    let mut portcullis = Portcullis::start(
        env!("CARGO_BIN_EXE_portcullis"),
        &manifests,
        &dir.path().join("state"),
        &[],
    )
    .unwrap();
    let port = portcullis.http_port;

    // Service and method, exactly: v1, with the gRPC status in the trailers.
    let hello = runtime.block_on(call(port, "grpc.test", "/greet.Greeter/Hello", &[]));
    assert_eq!(hello.status, 200, "{hello:?}\n{}", portcullis.log());
    assert_eq!(
        hello.message,
        "v1: portcullis /greet.Greeter/Hello x-route=none"
    );
    assert_eq!(hello.grpc_status.as_deref(), Some("0"));

    // The same method with one more header match: that rule goes first.
    let canary = runtime.block_on(call(
        port,
        "grpc.test",
        "/greet.Greeter/Hello",
        &[("x-canary", "yes")],
    ));
    assert_eq!(
        canary.message,
        "v2: portcullis /greet.Greeter/Hello x-route=none"
    );

    // Any other method of the service: v2, through both header filters.
    let bye = runtime.block_on(call(port, "grpc.test", "/greet.Greeter/Bye", &[]));
    assert_eq!(
        bye.message,
        "v2: portcullis /greet.Greeter/Bye x-route=any-method"
    );
    assert_eq!(bye.served_by.as_deref(), Some("portcullis"));

    // A service matched by a regular expression.
    let admin = runtime.block_on(call(port, "grpc.test", "/admin.Users/List", &[]));
    assert_eq!(
        admin.message,
        "v1: portcullis /admin.Users/List x-route=none"
    );

    // No rule takes it: 404, which gRPC clients read as UNIMPLEMENTED.
    let other = runtime.block_on(call(port, "grpc.test", "/other.Service/Hello", &[]));
    assert_eq!((other.status, other.grpc_status), (404, None));

    // The rule's only backend does not exist: 503, which gRPC clients read as UNAVAILABLE.
    let gone = runtime.block_on(call(port, "grpc.test", "/gone.Service/Call", &[]));
    assert_eq!(
        (gone.status, gone.grpc_status),
        (503, None),
        "{}",
        portcullis.log()
    );

    let health = runtime.block_on(call(port, "grpc.test", "/health.Health/Check", &[]));
    assert_eq!(
        health.message,
        "v1: portcullis /health.Health/Check x-route=none"
    );

    // The younger HTTPRoute shares the hostname: it is refused, so plain HTTP on the host
    // reaches no route.
    assert_eq!(http_get(port, "grpc.test", "/").unwrap().status, 404);
    let status = portcullis.admin("/status").unwrap().body;
    assert!(
        status.contains("kind: GRPCRoute") && status.contains("reason: HostnameConflict"),
        "{status}"
    );

    assert_eq!(
        portcullis.metric("portcullis_objects{kind=\"GRPCRoute\"}"),
        Some(1.0)
    );

    // What HAProxy was given: the backends are HTTP/2 servers in clear text (`proto h2`,
    // no `ssl`), the exact method is an exact path in the maps, the service a prefix, the
    // regular expression a condition of the host's catch-all path, and the rule without
    // a valid backend is sent to the 503 section.
    let state = dir.path().join("state");
    let files = test_support::managed_files(&state);
    let text = |prefix: &str| -> String {
        files
            .iter()
            .filter(|(path, _)| path.starts_with(prefix))
            .map(|(_, bytes)| String::from_utf8(bytes.clone()).unwrap())
            .collect()
    };
    let backends = text("backends/");
    for (service, port) in [("greeter-v1", ports[0]), ("greeter-v2", ports[1])] {
        // A section of its own, HTTP/2 for the GRPCRoute: the Service port does not say it.
        let section = format!("backend default_{service}_50051_grpc\n");
        let start = backends
            .find(&section)
            .unwrap_or_else(|| panic!("no section {section}:\n{backends}"));
        let lines: Vec<&str> = backends[start..]
            .lines()
            .skip(1)
            .take_while(|line| !line.is_empty())
            .filter(|line| {
                line.starts_with("    server ") || line.starts_with("    default-server")
            })
            .collect();
        assert_eq!(
            lines,
            [
                "    default-server proto h2 check inter 2s".to_owned(),
                format!("    server 127.0.0.1_{port} 127.0.0.1:{port}")
            ],
            "{backends}"
        );
    }
    let exact = text("maps/http-exact.map");
    let prefix = text("maps/http-prefix.map");
    assert!(
        exact
            .lines()
            .any(|line| line.starts_with("grpc.test#/greet.Greeter/Hello _gw_")),
        "{exact}"
    );
    assert!(
        prefix
            .lines()
            .any(|line| line.starts_with("grpc.test#/greet.Greeter/ _gw_")),
        "{prefix}"
    );
    let config = text("haproxy.cfg");
    assert!(
        config
            .lines()
            .any(|line| line.ends_with(" path -m reg -- '^/(?:admin\\..*)/(?:[^/]+)$'")),
        "{config}"
    );
    assert!(
        config.contains(
            "\nbackend _gateway_503\n    http-request return status 503 content-type text/plain string \"503 No Valid Backend\"\n"
        ),
        "{config}"
    );
    assert!(
        config
            .lines()
            .any(|line| line
                .starts_with("    use_backend _gateway_503 if { var(txn.rule) -m str _gw_")),
        "{config}"
    );

    // The route changes: the health check goes to v2 instead, once the file is rewritten,
    // and live (its path is a map entry: one backend, no condition), without a reload.
    let reloads = portcullis.metric_total("portcullis_reloads_total");
    let edited = std::fs::read_to_string(manifests.join("all.yaml"))
        .unwrap()
        .replacen(
            "backendRefs: [{name: greeter-v1, port: 50051, weight: 1}]",
            "backendRefs: [{name: greeter-v2, port: 50051, weight: 1}]",
            1,
        );
    test_support::write_manifest(&manifests, "all.yaml", &edited).unwrap();
    portcullis
        .wait_until(std::time::Duration::from_secs(20), |_| {
            runtime
                .block_on(call(port, "grpc.test", "/health.Health/Check", &[]))
                .message
                .starts_with("v2: ")
        })
        .unwrap_or_else(|err| panic!("the change never reached HAProxy: {err}"));
    assert_eq!(
        portcullis.metric_total("portcullis_reloads_total"),
        reloads,
        "{}",
        portcullis.log()
    );
}

/// An HAProxy in front of a gRPC server that takes only TLS with ALPN `h2`, and tells the
/// server (in `x-route`) the ALPN protocol it was reached with. Stopped by its pid.
struct TlsUpstream {
    child: std::process::Child,
    port: u16,
}

impl TlsUpstream {
    fn start(dir: &std::path::Path, grpc_port: u16) -> Self {
        let port = test_support::free_port();
        let (certificate, key) = test_support::self_signed("greeter.test", &["greeter.test"]);
        std::fs::write(dir.join("upstream.pem"), format!("{certificate}{key}")).unwrap();
        let config = format!(
            "global\n    default-path config\n\
             defaults\n    mode http\n    timeout connect 5s\n    timeout client 30s\n    timeout server 30s\n\
             frontend tls\n    bind 127.0.0.1:{port} ssl crt upstream.pem alpn h2\n    \
             http-request set-header x-route tls-alpn-%[ssl_fc_alpn]\n    default_backend grpc\n\
             backend grpc\n    server greeter 127.0.0.1:{grpc_port} proto h2\n"
        );
        let path = dir.join("upstream.cfg");
        std::fs::write(&path, config).unwrap();
        let child = std::process::Command::new("haproxy")
            .args(["-db", "-f"])
            .arg(&path)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        // The controller's HAProxy checks it as soon as it starts.
        test_support::wait_for_listener(port);
        Self { child, port }
    }
}

impl Drop for TlsUpstream {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_grpc_route_to_a_service_whose_port_says_https_speaks_h2_over_tls() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let listener = runtime
        .block_on(TcpListener::bind(("127.0.0.1", 0)))
        .unwrap();
    let grpc_port = listener.local_addr().unwrap().port();
    runtime.spawn(serve(listener, "secure"));
    let dir = tempfile::tempdir().unwrap();
    let upstream = TlsUpstream::start(dir.path(), grpc_port);

    let manifests = dir.path().join("manifests");
    std::fs::create_dir(&manifests).unwrap();
    let objects = format!(
        "---\napiVersion: v1\nkind: Service\nmetadata: {{name: secure, namespace: default}}\nspec:\n  ports: [{{port: 443, appProtocol: https}}]\n\
         ---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {{name: secure-0, namespace: default, labels: {{kubernetes.io/service-name: secure}}}}\naddressType: IPv4\nports: [{{port: {}}}]\nendpoints: [{{addresses: [127.0.0.1]}}]\n\
         ---\napiVersion: gateway.networking.k8s.io/v1\nkind: GatewayClass\nmetadata: {{name: portcullis}}\nspec: {{controllerName: portcullis.dev/gateway-controller}}\n\
         ---\napiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {{name: edge, namespace: default}}\nspec:\n  gatewayClassName: portcullis\n  listeners: [{{name: http, protocol: HTTP, port: 80}}]\n\
         ---\napiVersion: gateway.networking.k8s.io/v1\nkind: GRPCRoute\nmetadata: {{name: secure, namespace: default}}\nspec:\n  parentRefs: [{{name: edge}}]\n  rules: [{{backendRefs: [{{name: secure, port: 443}}]}}]\n",
        upstream.port
    );
    std::fs::write(manifests.join("all.yaml"), objects).unwrap();
    let portcullis = Portcullis::start(
        env!("CARGO_BIN_EXE_portcullis"),
        &manifests,
        &dir.path().join("state"),
        &[],
    )
    .unwrap();

    let answer = runtime.block_on(call(
        portcullis.http_port,
        "grpc.test",
        "/greet.Greeter/Hello",
        &[],
    ));
    assert_eq!(answer.status, 200, "{answer:?}\n{}", portcullis.log());
    assert_eq!(
        answer.message,
        "secure: portcullis /greet.Greeter/Hello x-route=tls-alpn-h2"
    );
    assert_eq!(answer.grpc_status.as_deref(), Some("0"));
}

#[test]
fn an_ingress_backend_with_backend_protocol_h2_carries_a_unary_call_and_its_trailers() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let listener = runtime
        .block_on(TcpListener::bind(("127.0.0.1", 0)))
        .unwrap();
    let grpc_port = listener.local_addr().unwrap().port();
    runtime.spawn(serve(listener, "greeter"));

    let dir = tempfile::tempdir().unwrap();
    let manifests = dir.path().join("manifests");
    std::fs::create_dir(&manifests).unwrap();
    let mut objects = backend("default", "greeter", 50051, None, &[(grpc_port, true)]);
    objects += "---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: greeter\n  annotations:\n    haproxy-ingress.github.io/backend-protocol: h2\nspec:\n  rules:\n  - host: grpc.test\n    http:\n      paths:\n      - {path: /, pathType: Prefix, backend: {service: {name: greeter, port: {number: 50051}}}}\n";
    std::fs::write(manifests.join("all.yaml"), objects).unwrap();
    let portcullis = Portcullis::start(
        env!("CARGO_BIN_EXE_portcullis"),
        &manifests,
        &dir.path().join("state"),
        &["--watch-ingress-without-class", "true"],
    )
    .unwrap();

    let answer = runtime.block_on(call(
        portcullis.http_port,
        "grpc.test",
        "/greet.Greeter/Hello",
        &[("x-route", "ingress")],
    ));
    assert_eq!(answer.status, 200, "{}", portcullis.log());
    assert_eq!(
        answer.message,
        "greeter: portcullis /greet.Greeter/Hello x-route=ingress"
    );
    assert_eq!(answer.grpc_status.as_deref(), Some("0"), "{answer:?}");
}
