//! Containment of the I/O toward HAProxy: the sweep of unmanaged entries, private key
//! files, `haproxy -c` that cannot hang, and sockets whatever the state directory's length.

// Test helpers fail loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::net::IpAddr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use haproxy::{CheckError, Haproxy, LaunchOptions, RuntimeApi, STAGING_DIR, StateDir};
use model::{
    Backend, BackendId, CertId, HaproxyDuration, Host, HostKey, Origin, PathKind, PathMatch,
    ProxyModel, Route, Server, TlsCert,
};
use plan::AppliedFiles;
use render::render;
use test_support::{free_port, self_signed};

/// A self-signed certificate for `encrypted.test` and its key, encrypted (pass phrase
/// "secret") and in the clear.
const ENCRYPTED_TEST_CERT: &str = "-----BEGIN CERTIFICATE-----
MIIBiDCCAS+gAwIBAgIUEO1qhAPINgYck5b3CAcEd5/rcq8wCgYIKoZIzj0EAwIw
GTEXMBUGA1UEAwwOZW5jcnlwdGVkLnRlc3QwIBcNMjYxMjAxMTYxMTQ4WhgPMjEy
NjExMDcxNjExNDhaMBkxFzAVBgNVBAMMDmVuY3J5cHRlZC50ZXN0MFkwEwYHKoZI
zj0CAQYIKoZIzj0DAQcDQgAEp9NXU+WGCS8yLkrGW5lYjjqnOMMABnDDx/e/WPaE
auXTWppEoZHHqDTifC9N909+1WSCllp3cXwGIwgWd8hxf6NTMFEwHQYDVR0OBBYE
FJYb9godRI9ssRqWKlsyTEJLBg0bMB8GA1UdIwQYMBaAFJYb9godRI9ssRqWKlsy
TEJLBg0bMA8GA1UdEwEB/wQFMAMBAf8wCgYIKoZIzj0EAwIDRwAwRAIgEaZHw1oR
PyP957sSTI+S+F6I3c5htXQnMcI7tVI7qTwCICTAW3Oge0NebHxoGniJnfxdcUja
bv4pDhVRJ6KGDz0R
-----END CERTIFICATE-----
";
const ENCRYPTED_KEY: &str = "-----BEGIN ENCRYPTED PRIVATE KEY-----
MIHjME4GCSqGSIb3DQEFDTBBMCkGCSqGSIb3DQEFDDAcBAjhg1Dz9W3l5wICCAAw
DAYIKoZIhvcNAgkFADAUBggqhkiG9w0DBwQISyB+t/Z0iRMEgZDovbg5yLUIZw4s
7CCMw2NIPEWY8Ef27iEenf6ezADFa64CQOPXCGpNfeh8Y8cQ9qKL7EhONjts0Ncr
MpAtZxs4mSOnGv/ceUOL8ugzC9GzdyQs2Nijt2PDvlSp2NEoobzPfkYbD3D2OOgB
rdUH+va9ruQi7gGeQz4eoxJgRFIZn93pdoe0AQ3rqbuhkj/hpeQ=
-----END ENCRYPTED PRIVATE KEY-----
";
const CLEAR_KEY: &str = "-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgchhLHOW59VQ0YRCK
O2sKLGMxvUDGFPhuQ0ffTki/WRihRANCAASn01dT5YYJLzIuSsZbmViOOqc4wwAG
cMPH979Y9oRq5dNamkShkceoNOJ8L033T37VZIKWWndxfAYjCBZ3yHF/
-----END PRIVATE KEY-----
";

fn haproxy_binary() -> PathBuf {
    [
        "/usr/sbin/haproxy",
        "/usr/local/sbin/haproxy",
        "/usr/bin/haproxy",
    ]
    .iter()
    .map(PathBuf::from)
    .find(|p| p.is_file())
    .expect("haproxy is installed")
}

fn origin() -> Origin {
    Origin {
        kind: "Ingress",
        namespace: "web".into(),
        name: "site".into(),
    }
}

fn tls_id() -> CertId {
    CertId {
        namespace: "web".into(),
        name: "a-tls".into(),
    }
}

/// One backend, served for `a.test` with the certificate `web/a-tls` (content `cert`).
fn model(cert: &str) -> ProxyModel {
    let mut model = ProxyModel::default();
    model.global.bind_address = IpAddr::from([127, 0, 0, 1]);
    model.global.http_port = free_port();
    model.global.https_port = free_port();
    let (default_cert, default_key) = self_signed("default", &["default"]);
    model.default_cert = TlsCert {
        pem_bundle: default_cert + &default_key,
    };
    let id = BackendId {
        namespace: "web".into(),
        service: "app".into(),
        port: "80".into(),
        mode: model::BackendMode::Http,
    };
    model.backends.insert(
        id.clone(),
        std::sync::Arc::new(Backend {
            id: id.clone(),
            servers: vec![Server::at(IpAddr::from([127, 0, 0, 1]), 9)],
            server_options: Default::default(),
            settings: std::sync::Arc::new(model::BackendSettings::plain(
                HaproxyDuration::parse("5s").unwrap(),
                HaproxyDuration::parse("50s").unwrap(),
            )),
            origins: vec![origin()],
        }),
    );
    let route = Route {
        frontends: model::Frontends::BOTH,
        target: model::RouteTarget::Backend(id),
        https_redirect: None,
        origin: origin(),
    };
    let path = PathMatch {
        path: "".into(),
        kind: PathKind::Prefix,
    };
    model.hosts.insert(
        HostKey::Exact("a.test".into()),
        Host {
            routes: model::Routes::from([(path, route)]),
            cert: Some(tls_id()),
            ..Host::default()
        },
    );
    model.certs.insert(
        tls_id(),
        TlsCert {
            pem_bundle: cert.to_owned(),
        },
    );
    model
}

fn plain_model() -> ProxyModel {
    let (cert, key) = self_signed("a.test", &["a.test"]);
    model(&(cert + &key))
}

/// `plain_model` whose servers are spoken to over TLS with a client certificate, which
/// HAProxy reads from its working directory.
fn client_certificate_model() -> ProxyModel {
    let mut model = plain_model();
    let (cert, key) = self_signed("client", &["client.test"]);
    let backends: Vec<_> = model.backends.values().cloned().collect();
    for mut backend in backends {
        let backend_mut = std::sync::Arc::make_mut(&mut backend);
        std::sync::Arc::make_mut(&mut backend_mut.server_options).tls = Some(model::BackendTls {
            verify: model::TlsVerify::None,
            sni: None,
            client_cert: Some(model::SecretPem {
                secret: CertId {
                    namespace: "web".into(),
                    name: "client".into(),
                },
                pem: cert.clone() + &key,
            }),
        });
        model.backends.insert(backend.id.clone(), backend);
    }
    model
}

fn sync(state: &StateDir, applied: &mut AppliedFiles, model: &ProxyModel) {
    let plan = plan::plan(applied, &render(model));
    state.apply(&plan, applied).unwrap();
}

fn mode(path: &Path) -> u32 {
    std::fs::symlink_metadata(path)
        .unwrap()
        .permissions()
        .mode()
        & 0o777
}

/// Writes an executable script; a fork elsewhere in the test binary may hold it open for
/// writing a moment, so the caller retries on "text file busy".
fn script(path: &Path, body: &str) {
    std::fs::write(path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

fn text_file_busy(err: &CheckError) -> bool {
    matches!(err, CheckError::Spawn { source, .. } if source.raw_os_error() == Some(26))
}

/// What a stranger (a crash, an older version, a mistake) leaves in the managed places.
/// Returns the file outside the state directory that the symlinks point at.
fn plant_unmanaged_entries(state: &Path, outside: &Path) -> PathBuf {
    let secret = outside.join("secret.pem");
    std::fs::write(&secret, "not ours\n").unwrap();
    std::os::unix::fs::symlink(&secret, state.join("certs/link.pem")).unwrap();
    std::os::unix::fs::symlink(outside, state.join("backends/linked-dir")).unwrap();
    let non_utf8 = std::ffi::OsStr::from_bytes(b"bad-\xff.map");
    std::fs::write(state.join("maps").join(non_utf8), "x y\n").unwrap();
    let fifo = std::process::Command::new("mkfifo")
        .arg(state.join("backends/shard-009.cfg"))
        .status()
        .unwrap();
    assert!(fifo.success());
    std::fs::create_dir_all(state.join("certs/nested.pem/deeper")).unwrap();
    std::fs::write(state.join("certs/nested.pem/deeper/key.pem"), "x").unwrap();
    std::fs::write(state.join("certs/extra.pem"), "not rendered\n").unwrap();
    std::fs::create_dir_all(state.join(STAGING_DIR).join("certs")).unwrap();
    std::fs::write(state.join(STAGING_DIR).join("certs/old.pem"), "x").unwrap();
    secret
}

/// Every entry of the managed directories, by relative path, with its type.
fn entries(state: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for dir in ["backends", "maps", "certs", "run"] {
        for entry in std::fs::read_dir(state.join(dir)).unwrap() {
            let entry = entry.unwrap();
            let file_type = entry.file_type().unwrap();
            let kind = if file_type.is_file() {
                "file"
            } else if file_type.is_socket() {
                "socket"
            } else {
                "other"
            };
            found.push(format!(
                "{dir}/{} {kind}",
                entry.file_name().to_string_lossy()
            ));
        }
    }
    found.sort();
    found
}

#[test]
fn the_sweep_removes_every_unmanaged_entry_at_start_up_and_at_each_sync() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("state");
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let first = plain_model();
    let mut state = StateDir::open(&root).unwrap();
    state.prepare_sockets().unwrap();
    let mut applied = AppliedFiles::new();
    sync(&state, &mut applied, &first);
    let managed = entries(&root);

    let secret = plant_unmanaged_entries(&root, &outside);
    let stray = std::os::unix::net::UnixListener::bind(root.join("run/stray.sock")).unwrap();
    std::fs::write(root.join("run/admin.sock"), "a file, not a socket").unwrap();
    // Start-up: a new process opens the directory again.
    let mut state = StateDir::open(&root).unwrap();
    state.prepare_sockets().unwrap();
    let mut scanned = state.scan().unwrap();
    assert_eq!(
        scanned.keys().filter(|f| *f == "certs/extra.pem").count(),
        1,
        "a stray regular file is recorded, for the first plan to delete"
    );
    sync(&state, &mut scanned, &first);
    assert_eq!(entries(&root), managed);
    assert!(!root.join(STAGING_DIR).exists());
    assert_eq!(std::fs::read_to_string(&secret).unwrap(), "not ours\n");
    assert!(
        outside.is_dir(),
        "a symlinked directory's target is left alone"
    );
    drop(stray);

    // A sync: the same again, and a managed directory replaced by a symlink.
    let secret = plant_unmanaged_entries(&root, &outside);
    std::fs::rename(root.join("maps"), dir.path().join("maps-moved")).unwrap();
    std::os::unix::fs::symlink(dir.path().join("maps-moved"), root.join("maps")).unwrap();
    let err = state.apply(&plan::plan(&scanned, &render(&first)), &mut scanned);
    assert!(
        err.unwrap_err().to_string().contains("vanished"),
        "the maps went with the directory: the caller must sync again"
    );
    sync(&state, &mut scanned, &first);
    assert_eq!(entries(&root), managed);
    assert!(root.join("maps").is_dir() && !root.join("maps").is_symlink());
    assert_eq!(std::fs::read_to_string(&secret).unwrap(), "not ours\n");
    assert_eq!(
        std::fs::read_dir(dir.path().join("maps-moved"))
            .unwrap()
            .count(),
        render::layout::MapFile::ALL.len() + 1,
        "nothing is removed through a symlink: the maps and the planted name are there"
    );
}

#[tokio::test]
async fn key_files_are_private_in_the_state_directory_and_in_staging() {
    let dir = tempfile::tempdir().unwrap();
    let mut state = StateDir::open(dir.path().join("state")).unwrap();
    let first = plain_model();
    let mut applied = AppliedFiles::new();
    sync(&state, &mut applied, &first);
    for (file, expected) in [
        ("certs/default.pem", 0o600),
        ("certs/web_a-tls.pem", 0o600),
        ("certs/crt-list.txt", 0o644),
        ("haproxy.cfg", 0o644),
    ] {
        assert_eq!(mode(&state.root().join(file)), expected, "{file}");
    }
    // A checker that reports what it was given: the staged modes, while it runs.
    let checker = dir.path().join("haproxy");
    let report = dir.path().join("staged-modes");
    script(
        &checker,
        &format!(
            "stat -c '%a %n' \"$(dirname \"$3\")\"/certs/* > {}",
            report.display()
        ),
    );
    // A new certificate is written into staging; the unchanged default one is linked.
    let mut second = first.clone();
    let (cert, key) = self_signed("a.test", &["a.test"]);
    second.certs.insert(
        tls_id(),
        TlsCert {
            pem_bundle: cert + &key,
        },
    );
    let mut outcome = Ok(());
    for _ in 0..5 {
        outcome = state.check(&checker, &render(&second), &applied).await;
        if !outcome.as_ref().is_err_and(text_file_busy) {
            break;
        }
    }
    outcome.unwrap();
    let staged = std::fs::read_to_string(&report).unwrap();
    let staged: Vec<(&str, &str)> = staged
        .lines()
        .map(|l| {
            let (mode, path) = l.split_once(' ').unwrap();
            (mode, path.rsplit('/').next().unwrap())
        })
        .collect();
    assert_eq!(
        staged,
        [
            ("644", "crt-list.txt"),
            ("600", "default.pem"),
            ("600", "web_a-tls.pem")
        ]
    );
    assert!(
        !state.root().join(STAGING_DIR).exists(),
        "staging is cleared after the check"
    );
}

#[tokio::test]
async fn an_encrypted_key_fails_the_check_at_once_and_staging_is_cleared() {
    let dir = tempfile::tempdir().unwrap();
    let mut state = StateDir::open(dir.path().join("state")).unwrap();
    let haproxy = haproxy_binary();
    let clear = model(&format!("{ENCRYPTED_TEST_CERT}{CLEAR_KEY}"));
    state
        .check(&haproxy, &render(&clear), &AppliedFiles::new())
        .await
        .unwrap();
    assert!(!state.root().join(STAGING_DIR).exists());

    let encrypted = model(&format!("{ENCRYPTED_TEST_CERT}{ENCRYPTED_KEY}"));
    let started = Instant::now();
    let err = state
        .check(&haproxy, &render(&encrypted), &AppliedFiles::new())
        .await
        .unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "no pass phrase was waited for"
    );
    let CheckError::Rejected(failure) = err else {
        panic!("not a rejection: {err}");
    };
    assert!(
        failure.output.contains("web_a-tls.pem"),
        "the certificate is named: {}",
        failure.output
    );
    assert!(!state.root().join(STAGING_DIR).exists());
}

#[tokio::test]
async fn a_check_that_hangs_is_killed_with_its_children_at_the_time_limit() {
    let dir = tempfile::tempdir().unwrap();
    let checker = dir.path().join("haproxy");
    let sleeper = dir.path().join("sleeper.pid");
    script(
        &checker,
        &format!("sleep 60 &\necho $! > {}\nwait", sleeper.display()),
    );
    let started = Instant::now();
    let mut outcome = Ok(());
    for _ in 0..5 {
        outcome =
            haproxy::check_config_within(&checker, dir.path(), Duration::from_millis(500)).await;
        if !outcome.as_ref().is_err_and(text_file_busy) {
            break;
        }
    }
    let err = outcome.unwrap_err();
    assert!(
        matches!(err, CheckError::TimedOut(limit) if limit == Duration::from_millis(500)),
        "{err}"
    );
    assert!(
        err.to_string().contains("did not finish within 500ms"),
        "{err}"
    );
    assert!(started.elapsed() < Duration::from_secs(10));
    let pid: u32 = std::fs::read_to_string(&sleeper)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    // Gone, or a zombie waiting for a reaper that is not ours.
    while test_support::process_runs(pid) {
        assert!(Instant::now() < deadline, "the checker's child still runs");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// HAProxy started on the state directory's files, its sockets at `sockets`.
async fn started(state: &StateDir, sockets: &haproxy::Sockets) -> Haproxy {
    Haproxy::start(&LaunchOptions {
        binary: haproxy_binary(),
        state_dir: state.root().to_path_buf(),
        sockets: sockets.clone(),
        share_stdout: false,
    })
    .await
    .unwrap()
}

/// Starts HAProxy on `root` (its servers' client certificate found from wherever its
/// working directory is), checks both sockets are 0600 and answer (runtime API, and the
/// master CLI through a reload), then stops it.
async fn haproxy_answers_on_private_sockets(root: &Path) {
    let mut state = StateDir::open(root).unwrap();
    let sockets = state.prepare_sockets().unwrap();
    for socket in [sockets.master(), sockets.admin()] {
        assert!(socket.as_os_str().len() <= haproxy::MAX_SOCKET_PATH);
    }
    let mut applied = AppliedFiles::new();
    sync(&state, &mut applied, &client_certificate_model());
    let mut haproxy = started(&state, &sockets).await;
    for socket in [sockets.master(), sockets.admin()] {
        assert_eq!(mode(&socket), 0o600, "{}", socket.display());
    }
    let api = RuntimeApi::new(sockets.admin());
    let info = api.query("show info").await.unwrap();
    assert!(info.contains("Name: HAProxy"), "{info}");
    let reloaded = haproxy.reload().await.unwrap();
    assert_eq!(reloaded.status.reloads, 1);
    let map = api.query("show map maps/hosts.map").await.unwrap();
    assert!(map.contains("a.test a.test"), "{map}");
    haproxy.stop(Duration::from_secs(2)).await;
}

#[tokio::test]
async fn sockets_of_a_short_state_directory_are_in_its_run_directory() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("state");
    haproxy_answers_on_private_sockets(&root).await;
    let mut state = StateDir::open(&root).unwrap();
    let sockets = state.prepare_sockets().unwrap();
    assert_eq!(sockets.working_dir(), state.root());
}

#[tokio::test]
async fn a_long_state_directory_gets_a_short_private_socket_directory() {
    let dir = tempfile::tempdir().unwrap();
    let mut root = dir.path().to_path_buf();
    while root.as_os_str().len() < 150 {
        root.push("a-rather-long-directory-name");
    }
    haproxy_answers_on_private_sockets(&root).await;
    let mut state = StateDir::open(&root).unwrap();
    let sockets = state.prepare_sockets().unwrap();
    let short = sockets.working_dir().to_path_buf();
    assert!(!short.starts_with(state.root()));
    assert_eq!(mode(&short), 0o700);
    assert_eq!(mode(&sockets.run_dir()), 0o700);
    assert!(
        !state.root().join("run").exists(),
        "no socket directory in the state directory"
    );
    // A cleaner of the temporary directory removed it all: a start makes it again.
    std::fs::remove_dir_all(&short).unwrap();
    let mut haproxy = started(&state, &sockets).await;
    assert_eq!(mode(&short), 0o700);
    haproxy.stop(Duration::from_secs(2)).await;
    std::fs::remove_dir_all(short).unwrap();
}

/// `plain_model` with `count` more backends over two shards.
fn sharded_model(count: usize) -> ProxyModel {
    let mut model = plain_model();
    model.global.backend_shards = 2;
    let app = model.backends.values().next().unwrap().clone();
    for index in 0..count {
        let mut backend = (*app).clone();
        backend.id.service = format!("svc-{index}").into();
        model
            .backends
            .insert(backend.id.clone(), std::sync::Arc::new(backend));
    }
    model
}

/// Runs `state.check` with `checker`, again while a fork elsewhere holds the script.
async fn check_with(
    state: &mut StateDir,
    checker: &Path,
    model: &ProxyModel,
) -> Result<(), CheckError> {
    let rendered = render(model);
    let mut outcome = Ok(());
    for _ in 0..5 {
        outcome = state.check(checker, &rendered, &AppliedFiles::new()).await;
        if !outcome.as_ref().is_err_and(text_file_busy) {
            break;
        }
    }
    outcome
}

#[tokio::test]
async fn shards_unchanged_since_the_last_pass_are_checked_as_stubs_and_a_failing_partial_check_is_redone_whole()
 {
    let dir = tempfile::tempdir().unwrap();
    let mut state = StateDir::open(dir.path().join("state")).unwrap();
    let report = dir.path().join("staged");
    let fail_on_stubs = dir.path().join("fail-on-stubs");
    // A checker that notes how many server lines each staged shard has, then runs the
    // real `haproxy -c`; told to, it refuses anything staged with a stub.
    let checker = dir.path().join("haproxy");
    script(
        &checker,
        &format!(
            "staged=\"$(dirname \"$3\")/backends\"\n\
             counts=\"\"\n\
             for shard in \"$staged\"/*; do counts=\"$counts $(grep -c '^    server ' \"$shard\")\"; done\n\
             echo \"$counts\" >> {report}\n\
             if [ -e {fail} ] && echo \"$counts\" | grep -qw 0; then echo stub refused >&2; exit 1; fi\n\
             exec {haproxy} \"$@\"",
            report = report.display(),
            fail = fail_on_stubs.display(),
            haproxy = haproxy_binary().display(),
        ),
    );
    let staged = || -> Vec<String> {
        std::fs::read_to_string(&report)
            .unwrap_or_default()
            .lines()
            .map(|line| line.trim().to_owned())
            .collect()
    };
    let mut first = sharded_model(8);
    // The default backend is named by the main configuration; the backend that changes
    // below lives in the other shard, whose stub must still define the default.
    let default = first.backends.keys().next().unwrap().clone();
    first.default_backend = Some(default.clone());
    let rendered = render(&first);
    let shard_of = |id: &model::BackendId| {
        let section = format!("backend {}\n", id.section_name());
        rendered
            .files
            .iter()
            .find(|(path, file)| path.starts_with("backends/") && file.text().contains(&section))
            .map(|(path, _)| path.clone())
            .unwrap()
    };
    let other = first
        .backends
        .keys()
        .find(|id| shard_of(id) != shard_of(&default))
        .unwrap()
        .clone();
    let shard_servers = |model: &ProxyModel| -> Vec<usize> {
        render(model)
            .files
            .iter()
            .filter(|(path, _)| path.starts_with("backends/"))
            .map(|(_, file)| file.text().matches("\n    server ").count())
            .collect()
    };
    assert_eq!(
        rendered
            .files
            .keys()
            .filter(|p| p.starts_with("backends/"))
            .count(),
        2
    );
    let full = shard_servers(&first);
    let full_line = |counts: &[usize]| {
        counts
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(" ")
    };

    // Nothing passed yet: the whole configuration.
    check_with(&mut state, &checker, &first).await.unwrap();
    assert_eq!(staged(), [full_line(&full)]);

    // One backend's servers change: its shard whole, the other as a stub, and the real
    // HAProxy accepts the stubs.
    let mut second = first.clone();
    let mut changed = (*second.backends[&other]).clone();
    changed
        .servers
        .push(model::Server::at(IpAddr::from([127, 0, 0, 2]), 9));
    second
        .backends
        .insert(other.clone(), std::sync::Arc::new(changed));
    check_with(&mut state, &checker, &second).await.unwrap();
    assert_eq!(
        staged().len(),
        2,
        "the partial check passed: no whole one after it"
    );
    let counts = shard_servers(&second);
    let changed_shard = counts.iter().zip(&full).position(|(a, b)| a != b).unwrap();
    let partial: Vec<usize> = (0..2)
        .map(|shard| {
            if shard == changed_shard {
                counts[shard]
            } else {
                0
            }
        })
        .collect();
    assert_eq!(staged()[1], full_line(&partial));

    // A partial check that fails is redone whole, and the whole one decides.
    std::fs::write(&fail_on_stubs, "").unwrap();
    let mut third = second.clone();
    let mut changed = (*third.backends[&other]).clone();
    changed.servers.pop();
    third
        .backends
        .insert(other.clone(), std::sync::Arc::new(changed));
    check_with(&mut state, &checker, &third).await.unwrap();
    let third_counts = shard_servers(&third);
    assert_eq!(staged().len(), 4, "a partial check, then the whole one");
    assert!(staged()[2].split(' ').any(|count| count == "0"));
    assert_eq!(staged()[3], full_line(&third_counts));
    std::fs::remove_file(&fail_on_stubs).unwrap();

    // A changed main configuration: every shard whole.
    let mut fourth = third.clone();
    fourth.global.max_connections += 1;
    check_with(&mut state, &checker, &fourth).await.unwrap();
    assert_eq!(staged()[4], full_line(&third_counts));
}

#[test]
fn hundreds_of_files_are_written_synced_together_and_each_recorded_once_on_disk() {
    // More than one batch of temporaries, each synced on several threads.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("state");
    let state = StateDir::open(&root).unwrap();
    let mut applied = AppliedFiles::new();
    let writes: Vec<(String, render::RenderedFile)> = (0..300)
        .map(|i| {
            let text = format!("# shard {i}\n");
            (
                format!("backends/shard-{i:03}.cfg"),
                render::RenderedFile::new(text, false),
            )
        })
        .collect();
    let plan = plan::Plan {
        writes: writes.clone(),
        deletes: Vec::new(),
    };
    state.apply(&plan, &mut applied).unwrap();
    for (path, file) in &writes {
        assert_eq!(
            std::fs::read_to_string(root.join(path)).unwrap(),
            file.text(),
            "{path}"
        );
        assert_eq!(applied.get(path), Some(&file.hash), "{path}");
    }
    assert_eq!(applied.len(), 300);
    let listed: Vec<_> = std::fs::read_dir(root.join("backends"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name())
        .collect();
    assert_eq!(listed.len(), 300, "no temporary is left: {listed:?}");
}
