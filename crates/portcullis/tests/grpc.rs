//! A gRPC call through HAProxy to an HTTP/2 backend (`backend-protocol: h2`): the client
//! speaks HTTP/2 without TLS to the plain frontend, HAProxy forwards over HTTP/2, and the
//! response message and its `grpc-status` trailer come back.

// Test helpers fail loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use bytes::{Bytes, BytesMut};
use test_support::{Portcullis, backend};
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

/// A unary gRPC service over HTTP/2 without TLS: `/greet.Greeter/Hello` answers
/// "hello, <request>" with the trailer `grpc-status: 0`, and records the path and the
/// content-type it saw.
async fn serve(listener: TcpListener) {
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
                    let answer = format!(
                        "hello, {} (path {}, content-type {})",
                        String::from_utf8_lossy(grpc_payload(&message)),
                        parts.uri.path(),
                        parts
                            .headers
                            .get("content-type")
                            .and_then(|v| v.to_str().ok())
                            .unwrap_or("none")
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
                    trailers.insert("grpc-message", http::HeaderValue::from_static("OK"));
                    stream.send_trailers(trailers).unwrap();
                });
            }
        });
    }
}

/// One unary call through the proxy: the response's status, message and trailers.
async fn call(port: u16, host: &str, name: &str) -> (u16, String, http::HeaderMap) {
    let socket = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let (client, connection) = h2::client::handshake(socket).await.unwrap();
    tokio::spawn(async move {
        let _ = connection.await;
    });
    let mut client = client.ready().await.unwrap();
    let request = http::Request::builder()
        .method("POST")
        .uri(format!("http://{host}/greet.Greeter/Hello"))
        .header("content-type", "application/grpc")
        .header("te", "trailers")
        .body(())
        .unwrap();
    let (response, mut stream) = client.send_request(request, false).unwrap();
    stream.send_data(grpc_frame(name.as_bytes()), true).unwrap();
    let response = response.await.unwrap();
    let status = response.status().as_u16();
    let mut body = response.into_body();
    let data = read_body(&mut body).await;
    let trailers = body.trailers().await.unwrap().unwrap_or_default();
    let message = if data.is_empty() {
        String::new()
    } else {
        String::from_utf8_lossy(grpc_payload(&data)).into_owned()
    };
    (status, message, trailers)
}

#[test]
fn a_unary_grpc_call_goes_through_an_h2_backend_with_its_trailers() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let listener = runtime
        .block_on(TcpListener::bind(("127.0.0.1", 0)))
        .unwrap();
    let grpc_port = listener.local_addr().unwrap().port();
    runtime.spawn(serve(listener));

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
        &[],
    )
    .unwrap();

    let (status, message, trailers) =
        runtime.block_on(call(portcullis.http_port, "grpc.test", "portcullis"));
    assert_eq!(status, 200, "{}", portcullis.log());
    assert_eq!(
        message,
        "hello, portcullis (path /greet.Greeter/Hello, content-type application/grpc)"
    );
    assert_eq!(
        trailers.get("grpc-status").and_then(|v| v.to_str().ok()),
        Some("0"),
        "{trailers:?}"
    );
    assert_eq!(
        trailers.get("grpc-message").and_then(|v| v.to_str().ok()),
        Some("OK")
    );
}
