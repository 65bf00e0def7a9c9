//! The state directory is owned (I1), `render` writes what `run` manages, `check` reports.

// Test helpers fail loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use test_support::{EchoServer, Portcullis, backend, http_get, self_signed, tls_secret};

const BIN: &str = env!("CARGO_BIN_EXE_portcullis");

fn manifests(dir: &Path, echo_port: u16) -> std::path::PathBuf {
    let manifests = dir.join("manifests");
    std::fs::create_dir_all(&manifests).unwrap();
    let mut objects = String::new();
    for index in 0..12 {
        objects += &backend(
            "default",
            &format!("svc{index}"),
            80,
            None,
            &[(echo_port, true)],
        );
        objects += &format!(
            "---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {{name: i{index}}}\nspec:\n  rules:\n  - host: h{index}.test\n    http:\n      paths:\n      - {{path: /, pathType: Prefix, backend: {{service: {{name: svc{index}, port: {{number: 80}}}}}}}}\n"
        );
    }
    let (cert, key) = self_signed("h0.test", &["h0.test"]);
    objects += &tls_secret("default", "h0", &cert, &key);
    objects += "---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: tls}\nspec:\n  tls:\n  - {hosts: [h0.test], secretName: h0}\n";
    std::fs::write(manifests.join("all.yaml"), objects).unwrap();
    manifests
}

fn render(manifests: &Path, out: &Path, extra: &[&str]) {
    let status = Command::new(BIN)
        .args(["render", "--bind-address", "127.0.0.1"])
        .arg("--manifests")
        .arg(manifests)
        .arg("--out")
        .arg(out)
        .args(extra)
        .output()
        .unwrap();
    assert!(
        status.status.success(),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );
}

#[test]
fn render_writes_exactly_what_run_manages_with_no_absolute_paths() {
    let dir = tempfile::tempdir().unwrap();
    let echo = EchoServer::start("a").unwrap();
    let manifests = manifests(dir.path(), echo.port);
    let state = dir.path().join("state");
    let mut portcullis =
        Portcullis::start(BIN, &manifests, &state, &["--backend-shards", "4"]).unwrap();
    assert_eq!(
        http_get(portcullis.http_port, "h7.test", "/")
            .unwrap()
            .server()
            .as_deref(),
        Some("a")
    );
    let ports = [portcullis.http_port, portcullis.https_port];
    assert!(portcullis.stop().unwrap());
    let run_files = test_support::managed_files(&state);

    // Same objects and flags, rendered into the same directory: not one byte changes.
    let flags = [
        "--backend-shards",
        "4",
        "--http-port",
        &ports[0].to_string(),
        "--https-port",
        &ports[1].to_string(),
    ];
    render(&manifests, &state, &flags);
    assert_eq!(test_support::managed_files(&state), run_files);

    // Rendered elsewhere: identical except the self-signed default certificate.
    let elsewhere = dir.path().join("elsewhere");
    render(&manifests, &elsewhere, &flags);
    let mut other = test_support::managed_files(&elsewhere);
    let mut mine = run_files.clone();
    assert!(
        other.remove("certs/default.pem").is_some() && mine.remove("certs/default.pem").is_some()
    );
    assert_eq!(other, mine);
    let names: Vec<&String> = run_files.keys().collect();
    assert_eq!(
        names,
        [
            "backends/shard-000.cfg",
            "backends/shard-001.cfg",
            "backends/shard-002.cfg",
            "backends/shard-003.cfg",
            "certs/crt-list.txt",
            "certs/default.pem",
            "certs/default_h0.pem",
            "haproxy.cfg",
            "maps/hosts.map",
            "maps/http-exact.map",
            "maps/http-prefix.map",
            "maps/https-exact.map",
            "maps/https-prefix.map",
            "maps/regex-hosts.map",
        ]
    );
    let root = state.canonicalize().unwrap();
    for (name, bytes) in &run_files {
        assert!(
            !String::from_utf8_lossy(bytes).contains(root.to_str().unwrap()),
            "{name} names the state directory"
        );
    }
    for key_file in ["certs/default.pem", "certs/default_h0.pem"] {
        let mode = std::fs::metadata(state.join(key_file))
            .unwrap()
            .permissions()
            .mode()
            & 0o777;
        assert_eq!(mode, 0o600, "{key_file}");
    }
}

#[test]
fn stale_files_are_deleted_at_start_up_and_after_a_shard_count_change() {
    let dir = tempfile::tempdir().unwrap();
    let echo = EchoServer::start("a").unwrap();
    let manifests = manifests(dir.path(), echo.port);
    let state = dir.path().join("state");
    render(&manifests, &state, &["--backend-shards", "8"]);
    assert_eq!(
        std::fs::read_dir(state.join("backends")).unwrap().count(),
        8
    );
    // What an older run or a crash could leave behind.
    std::fs::write(
        state.join("backends/shard-042.cfg"),
        "backend stale_leftover_80\n    server s 127.0.0.1:1\n",
    )
    .unwrap();
    std::fs::write(state.join("maps/old-frontend.map"), "x y\n").unwrap();
    std::fs::write(state.join("certs/default_gone.pem"), "old\n").unwrap();
    std::fs::write(state.join("certs/.tmpAbC"), "half-written\n").unwrap();
    std::fs::create_dir_all(state.join("run")).unwrap();
    std::fs::write(state.join("run/not-managed"), "removed").unwrap();
    std::fs::write(dir.path().join("elsewhere.pem"), "not ours").unwrap();
    std::os::unix::fs::symlink(
        dir.path().join("elsewhere.pem"),
        state.join("certs/default_link.pem"),
    )
    .unwrap();
    std::fs::create_dir_all(state.join("maps/nested")).unwrap();
    std::fs::write(state.join("notes.txt"), "kept").unwrap();

    let mut portcullis =
        Portcullis::start(BIN, &manifests, &state, &["--backend-shards", "3"]).unwrap();
    let files: Vec<String> = test_support::managed_files(&state)
        .into_keys()
        .filter(|f| !f.starts_with("certs/") || f.ends_with("list.txt"))
        .collect();
    assert_eq!(
        files,
        [
            "backends/shard-000.cfg",
            "backends/shard-001.cfg",
            "backends/shard-002.cfg",
            "certs/crt-list.txt",
            "haproxy.cfg",
            "maps/hosts.map",
            "maps/http-exact.map",
            "maps/http-prefix.map",
            "maps/https-exact.map",
            "maps/https-prefix.map",
            "maps/regex-hosts.map",
        ]
    );
    assert!(
        !state.join("certs/default_gone.pem").exists() && !state.join("certs/.tmpAbC").exists()
    );
    for unmanaged in ["run/not-managed", "certs/default_link.pem", "maps/nested"] {
        assert!(
            std::fs::symlink_metadata(state.join(unmanaged)).is_err(),
            "{unmanaged} is swept"
        );
    }
    assert_eq!(
        std::fs::read_to_string(dir.path().join("elsewhere.pem")).unwrap(),
        "not ours",
        "a symlink is removed, never followed"
    );
    assert!(
        state.join("notes.txt").exists(),
        "only the managed places are swept"
    );
    let all_backends: String = (0..3)
        .map(|s| std::fs::read_to_string(state.join(format!("backends/shard-00{s}.cfg"))).unwrap())
        .collect();
    assert_eq!(all_backends.matches("\nbackend ").count(), 12);
    assert!(!all_backends.contains("stale_leftover"));
    assert_eq!(
        http_get(portcullis.http_port, "h11.test", "/")
            .unwrap()
            .server()
            .as_deref(),
        Some("a")
    );
    assert!(portcullis.stop().unwrap());
}

#[test]
fn a_state_directory_too_long_for_a_socket_path_still_serves() {
    let dir = tempfile::tempdir().unwrap();
    let echo = EchoServer::start("a").unwrap();
    let manifests = manifests(dir.path(), echo.port);
    let mut state = dir.path().join("state");
    while state.as_os_str().len() < 150 {
        state.push("a-rather-long-directory-name");
    }
    // The harness writes its log next to the state directory.
    std::fs::create_dir_all(state.parent().unwrap()).unwrap();
    let mut portcullis = Portcullis::start(BIN, &manifests, &state, &[]).unwrap();
    assert_eq!(
        http_get(portcullis.http_port, "h3.test", "/")
            .unwrap()
            .server()
            .as_deref(),
        Some("a")
    );
    // HAProxy runs in the short socket directory, outside the state directory.
    let master = portcullis.haproxy_pid().unwrap();
    let sockets = std::fs::read_link(format!("/proc/{master}/cwd")).unwrap();
    assert!(!sockets.starts_with(dir.path()), "{}", sockets.display());
    assert!(sockets.join("run/admin.sock").exists());
    assert!(portcullis.stop().unwrap());
    std::fs::remove_dir_all(sockets).unwrap();
}

#[test]
fn check_reports_every_problem_and_fails_only_when_there_is_one() {
    let dir = tempfile::tempdir().unwrap();
    let manifests = manifests(dir.path(), 9);
    let check = |extra: &[&str]| {
        let output = Command::new(BIN)
            .arg("check")
            .arg("--manifests")
            .arg(&manifests)
            .args(extra)
            .output()
            .unwrap();
        (
            output.status.success(),
            String::from_utf8(output.stdout).unwrap(),
        )
    };
    assert_eq!(check(&[]), (true, String::new()));
    std::fs::write(manifests.join("bad.yaml"), "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: bad, annotations: {portcullis.dev/ssl-redirect: maybe}}\nspec:\n  rules:\n  - host: \"bad host\"\n  - host: ok.test\n    http:\n      paths:\n      - {path: nope, pathType: Prefix, backend: {service: {name: svc0, port: {number: 80}}}}\n---\nkind: [\n").unwrap();
    let (ok, report) = check(&[]);
    assert!(!ok);
    assert_eq!(
        report,
        "bad.yaml: document 2 (line 12): invalid YAML: ".to_owned()
            + report
                .lines()
                .next()
                .unwrap()
                .split("invalid YAML: ")
                .nth(1)
                .unwrap()
            + "\n"
            + "Ingress default/bad: metadata.annotations[portcullis.dev/ssl-redirect]: invalid value: 'maybe' is not true or false; the global value is used\n"
            + "Ingress default/bad: spec.rules[0].host: 'bad host' is not a valid host name; the rule is skipped\n"
            + "Ingress default/bad: spec.rules[1].http.paths[0]: path 'nope' must start with '/'; the path is skipped\n"
    );
}
