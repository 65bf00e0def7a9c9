//! Long-lived connections through a real HAProxy: WebSockets outlive reloads and the
//! client and server idle timeouts (`timeout-tunnel`), and after a reload the replaced
//! worker's sessions are closed one by one over the end of `timeout-stop`
//! (`close-sessions-duration`) instead of all together when it ends.

// Test helpers fail loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

use test_support::{Portcullis, backend};

const BIN: &str = env!("CARGO_BIN_EXE_portcullis");

/// A backend that answers every request with the start of a chunked body and then keeps
/// the connection open: a stream that outlives any reload.
fn streaming_backend() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let mut open = Vec::new();
        for mut stream in listener.incoming().flatten() {
            let mut buffer = [0_u8; 4096];
            let _ = stream.read(&mut buffer);
            let _ = stream
                .write_all(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n");
            open.push(stream);
        }
    });
    port
}

/// Opens a request to the streaming backend and waits for its first bytes.
fn open_stream(port: u16) -> TcpStream {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .write_all(b"GET / HTTP/1.1\r\nhost: stream.test\r\n\r\n")
        .unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let mut buffer = [0_u8; 256];
    let read = stream.read(&mut buffer).unwrap();
    assert!(
        String::from_utf8_lossy(&buffer[..read]).starts_with("HTTP/1.1 200"),
        "{:?}",
        String::from_utf8_lossy(&buffer[..read])
    );
    stream
}

/// How long after `since` the stream was closed by the proxy.
fn closed_after(mut stream: TcpStream, since: Instant) -> Duration {
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let mut buffer = [0_u8; 256];
    loop {
        match stream.read(&mut buffer) {
            Ok(0) | Err(_) => return since.elapsed(),
            Ok(_) => {}
        }
    }
}

/// A WebSocket backend: it accepts the upgrade (RFC 6455's sample key and answer) and
/// echoes whatever it gets, for as long as the connection lives.
fn websocket_backend() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let mut buffer = [0_u8; 4096];
                let _ = stream.read(&mut buffer);
                let _ = stream.write_all(b"HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\nconnection: Upgrade\r\nsec-websocket-accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n");
                while let Ok(read) = stream.read(&mut buffer) {
                    if read == 0 || stream.write_all(&buffer[..read]).is_err() {
                        break;
                    }
                }
            });
        }
    });
    port
}

/// Opens a WebSocket through the proxy (the upgrade answered 101).
fn open_websocket(port: u16) -> TcpStream {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .write_all(b"GET /chat HTTP/1.1\r\nhost: ws.test\r\nconnection: Upgrade\r\nupgrade: websocket\r\nsec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\nsec-websocket-version: 13\r\n\r\n")
        .unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let mut buffer = [0_u8; 512];
    let read = stream.read(&mut buffer).unwrap();
    let head = String::from_utf8_lossy(&buffer[..read]).into_owned();
    assert!(head.starts_with("HTTP/1.1 101"), "{head:?}");
    stream
}

/// Sends a frame's bytes and reads them back; false once the proxy has closed the socket.
fn echoes(stream: &mut TcpStream, bytes: &[u8]) -> bool {
    if stream.write_all(bytes).is_err() {
        return false;
    }
    let mut buffer = vec![0_u8; bytes.len()];
    stream.read_exact(&mut buffer).is_ok() && buffer == bytes
}

/// Starts portcullis on one Ingress routing `host` to a backend on `port`, and the global
/// ConfigMap `configmap` (ops/global); returns the manifest directory to edit.
fn start(
    dir: &std::path::Path,
    host: &str,
    port: u16,
    configmap: &str,
) -> (std::path::PathBuf, Portcullis) {
    let manifests = dir.join("manifests");
    std::fs::create_dir_all(&manifests).unwrap();
    let objects = format!(
        "{}---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {{name: app, namespace: default}}\nspec:\n  rules:\n  - host: {host}\n    http:\n      paths:\n      - {{path: /, pathType: Prefix, backend: {{service: {{name: app, port: {{number: 80}}}}}}}}\n",
        backend("default", "app", 80, None, &[(port, true)])
    );
    std::fs::write(manifests.join("app.yaml"), objects).unwrap();
    std::fs::write(manifests.join("global.yaml"), configmap).unwrap();
    let portcullis = Portcullis::start(
        BIN,
        &manifests,
        &dir.join("state"),
        &[
            "--configmap",
            "ops/global",
            "--watch-ingress-without-class",
            "true",
        ],
    )
    .unwrap();
    (manifests, portcullis)
}

#[test]
fn a_websocket_outlives_a_reload_and_the_idle_timeouts_until_timeout_tunnel() {
    let dir = tempfile::tempdir().unwrap();
    // Client and server idle timeouts of 1 s stand in for the 50 s defaults: a tunnel
    // is bounded by timeout-tunnel (1 h by default) instead.
    let configmap = |extra: &str| {
        format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: global, namespace: ops}}\ndata: {{timeout-client: 1s, timeout-server: 1s{extra}}}\n"
        )
    };
    let (manifests, mut portcullis) =
        start(dir.path(), "ws.test", websocket_backend(), &configmap(""));
    let mut socket = open_websocket(portcullis.http_port);
    assert!(echoes(&mut socket, b"\x81\x05hello"));

    // A reload (a change of the defaults section), then three times the idle timeouts.
    let reloads = |p: &Portcullis| p.metric_total("portcullis_reloads_total");
    let before = reloads(&portcullis);
    std::fs::write(
        manifests.join("global.yaml"),
        configmap(", timeout-connect: 4s"),
    )
    .unwrap();
    portcullis
        .wait_until(Duration::from_secs(10), |p| reloads(p) > before)
        .unwrap();
    std::thread::sleep(Duration::from_secs(3));
    assert!(
        echoes(&mut socket, b"\x81\x05again"),
        "the tunnel survives the reload and the idle timeouts"
    );

    // timeout-tunnel bounds an idle tunnel.
    let before = reloads(&portcullis);
    std::fs::write(
        manifests.join("global.yaml"),
        configmap(", timeout-connect: 4s, timeout-tunnel: 1s"),
    )
    .unwrap();
    portcullis
        .wait_until(Duration::from_secs(10), |p| reloads(p) > before)
        .unwrap();
    let mut short = open_websocket(portcullis.http_port);
    assert!(echoes(&mut short, b"\x81\x02hi"));
    std::thread::sleep(Duration::from_secs(3));
    assert!(
        !echoes(&mut short, b"\x81\x02hi"),
        "an idle tunnel is closed after timeout-tunnel"
    );
}

#[test]
fn a_replaced_worker_s_streams_are_closed_one_by_one_before_timeout_stop() {
    let dir = tempfile::tempdir().unwrap();
    // A 3 s window at the end of a 6 s timeout-stop: the closing starts 3 s after the
    // reload and ends by 6 s.
    let configmap = |timeout_server: &str| {
        format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: global, namespace: ops}}\ndata: {{timeout-stop: 6s, close-sessions-duration: '50%', timeout-server: {timeout_server}}}\n"
        )
    };
    let (manifests, mut portcullis) = start(
        dir.path(),
        "stream.test",
        streaming_backend(),
        &configmap("30s"),
    );
    let streams: Vec<TcpStream> = (0..3).map(|_| open_stream(portcullis.http_port)).collect();

    // A change of the defaults section reloads HAProxy; the streams stay with the old
    // worker.
    let reloads = |p: &Portcullis| p.metric_total("portcullis_reloads_total");
    let before = reloads(&portcullis);
    std::fs::write(manifests.join("global.yaml"), configmap("31s")).unwrap();
    portcullis
        .wait_until(Duration::from_secs(10), |p| reloads(p) > before)
        .unwrap();
    let reloaded = Instant::now();

    let closers: Vec<_> = streams
        .into_iter()
        .map(|stream| std::thread::spawn(move || closed_after(stream, reloaded)))
        .collect();
    let mut closed: Vec<Duration> = closers.into_iter().map(|c| c.join().unwrap()).collect();
    closed.sort();
    let first = closed[0];
    let last = closed[2];
    assert!(
        first >= Duration::from_millis(2500),
        "nothing is closed before the window opens: {closed:?}"
    );
    assert!(
        last < Duration::from_millis(5900),
        "all are closed within timeout-stop: {closed:?}"
    );
    assert!(
        closed[1] - first >= Duration::from_millis(600)
            && last - closed[1] >= Duration::from_millis(600),
        "one by one, not together: {closed:?}"
    );
    // The new worker serves new streams as before.
    drop(open_stream(portcullis.http_port));
    assert!(
        portcullis
            .log()
            .contains("the replaced worker's sessions will be closed one by one"),
        "{}",
        portcullis.log()
    );
}
