//! The bundled example (README's first command) serves what the README shows.

// Test helpers fail loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;

use test_support::{EchoServer, Portcullis, http_get, https_get};

#[test]
fn bundled_example_routes_hosts_paths_and_tls() {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/manifests");
    let check = std::process::Command::new(env!("CARGO_BIN_EXE_portcullis"))
        .args(["check", "--configmap", "demo/portcullis", "--manifests"])
        .arg(&examples)
        .output()
        .unwrap();
    assert!(
        check.status.success(),
        "{}",
        String::from_utf8_lossy(&check.stdout)
    );

    // The example's endpoints are fixed ports; a copy points them at this test's backends.
    let dir = tempfile::tempdir().unwrap();
    let manifests = dir.path().join("manifests");
    std::fs::create_dir(&manifests).unwrap();
    let backends: Vec<EchoServer> = ["web-1", "web-2", "api"]
        .iter()
        .map(|n| EchoServer::start(n).unwrap())
        .collect();
    // And the TCP listener's port is one free here.
    let tcp_port = test_support::free_port();
    for entry in std::fs::read_dir(&examples).unwrap().flatten() {
        let mut text = std::fs::read_to_string(entry.path()).unwrap();
        for (fixed, server) in [9101, 9102, 9103].iter().zip(&backends) {
            text = text.replace(&format!("port: {fixed}"), &format!("port: {}", server.port));
        }
        text = text.replace("port: 9000}", &format!("port: {tcp_port}}}"));
        std::fs::write(manifests.join(entry.file_name()), text).unwrap();
    }
    let portcullis = Portcullis::start(
        env!("CARGO_BIN_EXE_portcullis"),
        &manifests,
        &dir.path().join("state"),
        &["--configmap", "demo/portcullis"],
    )
    .unwrap();

    let redirect = http_get(portcullis.http_port, "www.example.test", "/").unwrap();
    assert_eq!(redirect.status, 308);
    let secure = https_get(
        portcullis.https_port,
        "www.example.test",
        "www.example.test",
        "/api/users",
    )
    .unwrap();
    assert_eq!(
        (
            secure.certificate_cn.as_str(),
            secure.response.server().as_deref()
        ),
        ("www.example.test", Some("api"))
    );
    let site: Vec<String> = (0..4)
        .filter_map(|_| {
            https_get(
                portcullis.https_port,
                "www.example.test",
                "www.example.test",
                "/",
            )
            .unwrap()
            .response
            .server()
        })
        .collect();
    assert!(
        site.contains(&"web-1".to_owned()) && site.contains(&"web-2".to_owned()),
        "{site:?}"
    );
    let shop = http_get(portcullis.http_port, "shop.apps.example.test", "/static").unwrap();
    assert!(
        shop.server().is_some_and(|s| s.starts_with("web-")),
        "{shop:?}"
    );
    assert_eq!(
        http_get(portcullis.http_port, "shop.apps.example.test", "/other")
            .unwrap()
            .server()
            .as_deref(),
        Some("api")
    );
    assert_eq!(
        http_get(portcullis.http_port, "unknown.example.test", "/anything")
            .unwrap()
            .server()
            .as_deref(),
        Some("api")
    );
    // The Gateway API part: a header match, a redirect, a 3:1 split.
    let canary = test_support::http_request(
        portcullis.http_port,
        "GET / HTTP/1.1\r\nHost: store.gateway.example.test\r\nx-canary: yes\r\nConnection: close\r\n\r\n",
    )
    .unwrap();
    assert_eq!(canary.server().as_deref(), Some("api"));
    let moved = http_get(
        portcullis.http_port,
        "store.gateway.example.test",
        "/old/page",
    )
    .unwrap();
    assert_eq!(moved.status, 301);
    assert_eq!(
        moved.headers.get("location").map(String::as_str),
        Some("http://store.gateway.example.test/new/page")
    );
    let split: Vec<String> = (0..40)
        .filter_map(|_| {
            http_get(portcullis.http_port, "store.gateway.example.test", "/")
                .unwrap()
                .server()
        })
        .collect();
    assert!(
        split.iter().any(|s| s.starts_with("web")) && split.iter().any(|s| s == "api"),
        "{split:?}"
    );
    // The TCPRoute: the listener port's bytes reach api (an HTTP request, carried as is).
    let raw = http_get(tcp_port, "any.test", "/raw").unwrap();
    assert_eq!(raw.server().as_deref(), Some("api"));
    assert_eq!(
        portcullis.metric("portcullis_configuration_errors"),
        Some(0.0)
    );
}
