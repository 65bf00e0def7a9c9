//! TLS files of global keys through a real HAProxy: the statistics page served over HTTPS
//! with a Secret's certificate (`stats-ssl-cert`), and Diffie-Hellman parameters from a
//! Secret (`ssl-dh-param`) used by a DHE handshake.

// Test helpers fail loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::process::Command;

use test_support::{EchoServer, Portcullis, backend, free_port, http_get, https_get, self_signed};

/// 3072-bit parameters (`openssl dhparam 3072`): larger than HAProxy's own 2048, so a
/// handshake shows which ones were used.
const DH_PARAMS: &str = include_str!("global_tls_dhparam.pem");

/// An RSA certificate and key made by the `openssl` tool (DHE needs an RSA certificate).
fn rsa_certificate(dir: &std::path::Path, host: &str) -> (String, String) {
    let (cert, key) = (dir.join("rsa.crt"), dir.join("rsa.key"));
    let status = Command::new("openssl")
        .args([
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
        ])
        .args(["-subj", &format!("/CN={host}"), "-addext"])
        .arg(format!("subjectAltName=DNS:{host}"))
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .output()
        .unwrap();
    assert!(status.status.success(), "{status:?}");
    (
        std::fs::read_to_string(cert).unwrap(),
        std::fs::read_to_string(key).unwrap(),
    )
}

/// A Secret of `stringData` fields.
fn secret(name: &str, fields: &[(&str, &str)]) -> String {
    let mut text = format!(
        "---\napiVersion: v1\nkind: Secret\nmetadata: {{name: {name}, namespace: ops}}\nstringData:\n"
    );
    for (key, value) in fields {
        text += &format!("  {key}: |\n");
        for line in value.lines() {
            text += &format!("    {line}\n");
        }
    }
    text
}

/// What `openssl s_client` agreed with the HTTPS frontend, offering only a DHE cipher.
fn dhe_handshake(port: u16, host: &str) -> String {
    let output = Command::new("openssl")
        .args(["s_client", "-connect", &format!("127.0.0.1:{port}")])
        .args([
            "-servername",
            host,
            "-tls1_2",
            "-cipher",
            "DHE-RSA-AES128-GCM-SHA256",
        ])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn stats_over_https_and_dh_parameters_from_secrets() {
    let dir = tempfile::tempdir().unwrap();
    let manifests = dir.path().join("manifests");
    std::fs::create_dir(&manifests).unwrap();
    let web = EchoServer::start("web").unwrap();
    let stats_port = free_port();
    let (stats_cert, stats_key) = self_signed("stats.test", &["stats.test"]);
    let (site_cert, site_key) = rsa_certificate(dir.path(), "dh.test");
    let mut objects = format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: global, namespace: ops}}\ndata:\n  stats-port: \"{stats_port}\"\n  stats-ssl-cert: stats-tls\n  ssl-dh-param: ops/dh\n"
    );
    objects += &test_support::tls_secret("ops", "stats-tls", &stats_cert, &stats_key);
    objects += &secret("dh", &[("dhparam.pem", DH_PARAMS)]);
    objects += &backend("default", "web", 80, None, &[(web.port, true)]);
    objects += &test_support::tls_secret("default", "site-tls", &site_cert, &site_key);
    objects += "---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: site, namespace: default}\nspec:\n  tls: [{hosts: [dh.test], secretName: site-tls}]\n  rules:\n  - host: dh.test\n    http:\n      paths:\n      - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}\n";
    std::fs::write(manifests.join("all.yaml"), objects).unwrap();
    let portcullis = Portcullis::start(
        env!("CARGO_BIN_EXE_portcullis"),
        &manifests,
        &dir.path().join("state"),
        &["--configmap", "ops/global"],
    )
    .unwrap();
    let log = portcullis.log();
    assert!(!log.contains("diagnostic"), "{log}");

    // The statistics page answers over TLS with the Secret's certificate, not in clear.
    let page = https_get(stats_port, "stats.test", "stats.test", "/;csv").unwrap();
    assert_eq!(page.response.status, 200);
    assert_eq!(page.certificate_cn, "stats.test");
    assert!(page.response.body.contains("# pxname"), "{page:?}");
    assert!(
        !matches!(http_get(stats_port, "stats.test", "/;csv"), Ok(r) if r.status == 200),
        "plain HTTP is not served"
    );

    // A DHE handshake uses the Secret's 3072-bit parameters (HAProxy's own are 2048).
    let agreed = dhe_handshake(portcullis.https_port, "dh.test");
    assert!(
        agreed.contains("Server Temp Key: DH, 3072 bits"),
        "{agreed}\n{}",
        std::fs::read_to_string(portcullis.state_dir.join("haproxy.cfg")).unwrap()
    );
    assert_eq!(
        https_get(portcullis.https_port, "dh.test", "dh.test", "/")
            .unwrap()
            .response
            .server()
            .as_deref(),
        Some("web")
    );
}
