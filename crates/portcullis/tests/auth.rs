//! Path authentication through a real HAProxy, from the client's side: HTTP Basic with
//! an htpasswd Secret (SHA-512 and bcrypt users, wrong and missing credentials, a Secret
//! change, unusable Secrets failing closed), and an external service in the manner of
//! oauth2-proxy (202/401, the sign-in redirect, headers passed on, a service that is down
//! or slow failing closed).

// Test helpers fail loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use test_support::{EchoServer, Portcullis, Response, backend, http_get, http_request};

/// A known bcrypt vector for `secret` (libxcrypt, cost 5).
const BCRYPT_SECRET: &str = "$2y$05$abcdefghijklmnopqrstuuOQiyCxlgf/oeuTqixKmWdcYUh4Hjl0a";

/// A SHA-512 crypt hash of `password`, by `openssl passwd -6`.
fn sha512(password: &str) -> String {
    let output = std::process::Command::new("openssl")
        .args(["passwd", "-6", password])
        .output()
        .unwrap();
    assert!(output.status.success());
    String::from_utf8(output.stdout).unwrap().trim().to_owned()
}

/// An Apache MD5 hash, by `openssl passwd -apr1`.
fn apr1(password: &str) -> String {
    let output = std::process::Command::new("openssl")
        .args(["passwd", "-apr1", password])
        .output()
        .unwrap();
    String::from_utf8(output.stdout).unwrap().trim().to_owned()
}

/// An Ingress of one host, path `/`, service `web`, with annotations under
/// haproxy-ingress's prefix.
fn ingress(name: &str, host: &str, pairs: &[(&str, &str)]) -> String {
    let annotations: String = pairs
        .iter()
        .map(|(key, value)| format!("    haproxy-ingress.github.io/{key}: {value:?}\n"))
        .collect();
    format!(
        "---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: {name}\n  namespace: default\n  annotations:\n{annotations}spec:\n  rules:\n  - host: \"{host}\"\n    http:\n      paths:\n      - {{path: \"/\", pathType: Prefix, backend: {{service: {{name: web, port: {{number: 80}}}}}}}}\n"
    )
}

/// An htpasswd Secret with the given `auth` content.
fn htpasswd_secret(namespace: &str, name: &str, content: &str) -> String {
    let lines: String = content.lines().map(|l| format!("    {l}\n")).collect();
    format!(
        "---\napiVersion: v1\nkind: Secret\nmetadata: {{name: {name}, namespace: {namespace}}}\nstringData:\n  auth: |\n{lines}"
    )
}

fn basic(user: &str, password: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"))
}

/// `GET /` on `host` with extra header lines.
fn get(port: u16, host: &str, path: &str, headers: &[(&str, &str)]) -> Response {
    let extra: String = headers
        .iter()
        .map(|(name, value)| format!("{name}: {value}\r\n"))
        .collect();
    http_request(
        port,
        &format!("GET {path} HTTP/1.1\r\nHost: {host}\r\n{extra}Connection: close\r\n\r\n"),
    )
    .unwrap()
}

fn seen_header(response: &Response, name: &str) -> Option<String> {
    let echo = response.echo()?;
    echo.get("headers")?.get(name)?.as_str().map(str::to_owned)
}

/// A fake oauth2-proxy: `/oauth2/auth` answers 202 with the user's headers to a request
/// carrying the cookie `session=good`, else 401; `/slow` answers after 5 s. It records the
/// method and headers of the last request.
struct FakeAuth {
    port: u16,
    last: Arc<Mutex<Vec<String>>>,
    stop: Arc<AtomicBool>,
}

impl FakeAuth {
    fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let last = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (seen, stopped) = (last.clone(), stop.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                if stopped.load(Ordering::Relaxed) {
                    return;
                }
                let Ok(stream) = stream else { continue };
                let seen = seen.clone();
                std::thread::spawn(move || answer(stream, &seen));
            }
        });
        Self { port, last, stop }
    }

    fn last_request(&self) -> Vec<String> {
        self.last.lock().unwrap().clone()
    }
}

impl Drop for FakeAuth {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

fn answer(stream: TcpStream, seen: &Mutex<Vec<String>>) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut lines = Vec::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let line = line.trim_end().to_owned();
        if line.is_empty() {
            break;
        }
        lines.push(line);
    }
    let request_line = lines.first().cloned().unwrap_or_default();
    let good = lines
        .iter()
        .any(|l| l.eq_ignore_ascii_case("cookie: session=good"));
    *seen.lock().unwrap() = lines;
    let mut stream = stream;
    let response = if request_line.contains(" /slow") {
        std::thread::sleep(Duration::from_secs(5));
        "HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".to_owned()
    } else if good {
        "HTTP/1.1 202 Accepted\r\nX-Auth-Request-User: alice\r\nX-Auth-Request-Email: alice@example.com\r\nX-Other: other\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".to_owned()
    } else {
        "HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Bearer realm=\"fake\"\r\nX-Secret-Debug: no\r\nContent-Type: text/plain\r\nContent-Length: 6\r\nConnection: close\r\n\r\ndenied".to_owned()
    };
    let _ = stream.write_all(response.as_bytes());
}

/// A server that answers every connection with a line that is not HTTP.
fn not_http() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            let _ = stream.write_all(b"SSH-2.0-OpenSSH_9.2\r\n");
        }
    });
    port
}

/// An HTTPS authentication service whose certificate no public CA signed: it would
/// answer 202 to anyone, if HAProxy trusted it.
fn self_signed_https() -> u16 {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let (cert, key) = test_support::self_signed("auth", &["localhost"]);
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(
            vec![CertificateDer::from_pem_slice(cert.as_bytes()).unwrap()],
            PrivateKeyDer::from_pem_slice(key.as_bytes()).unwrap(),
        )
        .unwrap();
    let config = Arc::new(config);
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let connection = rustls::ServerConnection::new(config.clone()).unwrap();
            let mut tls = rustls::StreamOwned::new(connection, stream);
            let mut line = String::new();
            if BufReader::new(&mut tls).read_line(&mut line).is_ok() {
                let _ = tls.write_all(
                    b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                );
            }
        }
    });
    port
}

fn closed_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

#[test]
fn basic_and_external_authentication_seen_by_client_and_backend() {
    let dir = tempfile::tempdir().unwrap();
    let manifests = dir.path().join("manifests");
    std::fs::create_dir(&manifests).unwrap();
    let web = EchoServer::start("web").unwrap();
    let auth = FakeAuth::start();
    let down = closed_port();
    let garbage = not_http();
    let untrusted = self_signed_https();
    let auth_url = format!("http://127.0.0.1:{}/oauth2/auth", auth.port);

    let mut objects = backend("default", "web", 80, None, &[(web.port, true)]);
    let users = format!(
        "alice:{}\nbob:{BCRYPT_SECRET}\napache:{}\nbroken line\ncarol::plain-pass\n",
        sha512("wonderland"),
        apr1("secret")
    );
    objects += &htpasswd_secret("default", "users", &users);
    objects += &htpasswd_secret("other", "users", "eve:$6$x$y\n");
    objects += &htpasswd_secret("default", "useless", "mallory:$apr1$a$b\n");
    objects += &ingress(
        "basic",
        "basic.test",
        &[("auth-secret", "users"), ("auth-realm", "Staff only")],
    );
    objects += &ingress("missing", "missing.test", &[("auth-secret", "nosuch")]);
    objects += &ingress("foreign", "foreign.test", &[("auth-secret", "other/users")]);
    objects += &ingress("useless", "useless.test", &[("auth-secret", "useless")]);
    objects += &ingress("typed", "typed.test", &[("auth-type", "basic")]);
    objects += &ingress(
        "external",
        "ext.test",
        &[
            ("auth-url", &auth_url),
            (
                "auth-headers-succeed",
                "X-Auth-Request-User,X-Auth-Request-Email",
            ),
            ("auth-headers-request", "Cookie"),
            ("auth-headers-fail", "WWW-Authenticate"),
        ],
    );
    objects += &ingress(
        "signin",
        "signin.test",
        &[
            ("auth-url", &auth_url),
            ("auth-method", "head"),
            (
                "auth-signin",
                "https://auth.example.com/oauth2/start?rd=%[hdr(host)]%[path]",
            ),
        ],
    );
    objects += &ingress(
        "any-method",
        "any.test",
        &[("auth-url", &auth_url), ("auth-method", "*")],
    );
    objects += &ingress(
        "garbage",
        "garbage.test",
        &[("auth-url", &format!("http://127.0.0.1:{garbage}/auth"))],
    );
    objects += &ingress(
        "untrusted",
        "untrusted.test",
        &[("auth-url", &format!("https://127.0.0.1:{untrusted}/auth"))],
    );
    objects += &ingress("badurl", "badurl.test", &[("auth-url", "ftp://x/auth")]);
    // haproxy-ingress's OAuth without the path where oauth2-proxy is served, and with an
    // implementation there is not: refused, never served open.
    objects += &ingress(
        "oauth",
        "oauth.test",
        &[("oauth", "oauth2_proxy"), ("oauth-uri-prefix", "/oauth2")],
    );
    objects += &ingress("oauth-other", "oauth-other.test", &[("oauth", "keycloak")]);
    objects += &ingress(
        "down",
        "down.test",
        &[("auth-url", &format!("http://127.0.0.1:{down}/oauth2/auth"))],
    );
    objects += &ingress(
        "slow",
        "slow.test",
        &[
            ("auth-url", &format!("http://127.0.0.1:{}/slow", auth.port)),
            ("auth-timeout", "800ms"),
        ],
    );
    // A Service reached at its cluster IP (the fake server's address here).
    objects += &format!(
        "---\napiVersion: v1\nkind: Service\nmetadata: {{name: oauth2-proxy, namespace: default}}\nspec:\n  clusterIP: 127.0.0.1\n  ports:\n  - port: {}\n",
        auth.port
    );
    objects += &ingress(
        "service",
        "svc.test",
        &[(
            "auth-url",
            &format!("svc://oauth2-proxy:{}/oauth2/auth", auth.port),
        )],
    );
    objects += &ingress(
        "noservice",
        "nosvc.test",
        &[("auth-url", "svc://nosuch:4180/oauth2/auth")],
    );
    // haproxy-ingress's OAuth: oauth2-proxy served at /oauth2 of the Ingress's own host.
    objects += &format!(
        "---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: oauth-ok\n  namespace: default\n  annotations: {{haproxy-ingress.github.io/oauth: oauth2_proxy}}\nspec:\n  rules:\n  - host: oauth-ok.test\n    http:\n      paths:\n      - {{path: /, pathType: Prefix, backend: {{service: {{name: web, port: {{number: 80}}}}}}}}\n      - {{path: /oauth2, pathType: Prefix, backend: {{service: {{name: oauth2-proxy, port: {{number: {}}}}}}}}}\n",
        auth.port
    );
    // The 401's page is the ConfigMap's.
    objects += "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: global, namespace: ops}\ndata:\n  http-response-401: |\n    content-type: text/plain\n\n    sign in first\n";
    std::fs::write(manifests.join("all.yaml"), &objects).unwrap();
    let mut portcullis = Portcullis::start(
        env!("CARGO_BIN_EXE_portcullis"),
        &manifests,
        &dir.path().join("state"),
        &["--configmap", "ops/global"],
    )
    .unwrap();
    let http = portcullis.http_port;

    // Basic: no credentials and wrong ones get 401 with the realm; SHA-512, bcrypt and
    // plain-text users get in.
    let none = get(http, "basic.test", "/", &[]);
    assert_eq!(
        (none.status, none.body.as_str()),
        (401, "sign in first\n"),
        "{none:?}"
    );
    assert_eq!(
        none.headers.get("www-authenticate").map(String::as_str),
        Some("Basic realm=\"Staff only\"")
    );
    let wrong = get(
        http,
        "basic.test",
        "/",
        &[(
            "Authorization",
            &format!("Basic {}", basic("alice", "nope")),
        )],
    );
    assert_eq!(wrong.status, 401);
    for (user, password) in [
        ("alice", "wonderland"),
        ("bob", "secret"),
        ("carol", "plain-pass"),
    ] {
        let right = get(
            http,
            "basic.test",
            "/",
            &[("Authorization", &format!("Basic {}", basic(user, password)))],
        );
        assert_eq!(
            (right.status, right.server().as_deref()),
            (200, Some("web")),
            "{user}"
        );
    }
    // The apr1 user was left out: its right password does not get in.
    let apache = get(
        http,
        "basic.test",
        "/",
        &[(
            "Authorization",
            &format!("Basic {}", basic("apache", "secret")),
        )],
    );
    assert_eq!(apache.status, 401);

    // Unusable Secrets fail closed.
    for host in ["missing.test", "foreign.test", "useless.test", "typed.test"] {
        assert_eq!(get(http, host, "/", &[]).status, 403, "{host}");
    }
    let log = portcullis.log();
    for expected in [
        "secret default/users, line 3: user 'apache': an Apache MD5 ($apr1$) hash",
        "secret default/users, line 4: no ':' between user and password",
        "secret default/nosuch not found; the path answers 403",
        "secret other/users is not in the Ingress's namespace default",
        "secret default/useless has no usable user",
        "'basic' needs auth-secret",
        "service default/nosuch not found",
    ] {
        assert!(log.contains(expected), "{expected}\n{log}");
    }
    // Hashes appear in the userlist and nowhere else: not in the log, not in the status.
    let bcrypt_tail = &BCRYPT_SECRET[10..];
    assert!(!log.contains(bcrypt_tail), "a hash reached the log");
    assert!(!portcullis.stdout().contains(bcrypt_tail));
    let config = std::fs::read_to_string(portcullis.state_dir.join("haproxy.cfg")).unwrap();
    assert!(config.contains(&format!("user 'bob' password '{BCRYPT_SECRET}'")));
    assert_eq!(config.matches(bcrypt_tail).count(), 1);
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(portcullis.state_dir.join("haproxy.cfg"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(
        mode & 0o077,
        0,
        "haproxy.cfg holds hashes: owner only ({mode:o})"
    );
    assert!(
        !portcullis
            .admin("/metrics")
            .unwrap()
            .body
            .contains(bcrypt_tail)
    );

    // External: the cookie is passed to the service; its user headers reach the backend,
    // a forged one is replaced, other headers of the answer are not passed on.
    let accepted = get(
        http,
        "ext.test",
        "/app",
        &[
            ("Cookie", "session=good"),
            ("X-Auth-Request-User", "mallory"),
        ],
    );
    assert_eq!(
        (accepted.status, accepted.server().as_deref()),
        (200, Some("web")),
        "{accepted:?}"
    );
    assert_eq!(
        seen_header(&accepted, "x-auth-request-user").as_deref(),
        Some("alice")
    );
    assert_eq!(
        seen_header(&accepted, "x-auth-request-email").as_deref(),
        Some("alice@example.com")
    );
    assert_eq!(seen_header(&accepted, "x-other"), None);
    let asked = auth.last_request();
    assert!(asked[0].starts_with("GET /oauth2/auth "), "{asked:?}");
    assert!(
        !asked
            .iter()
            .any(|l| l.to_ascii_lowercase().starts_with("x-auth-request-user")),
        "only the Cookie is passed to the service: {asked:?}"
    );
    // A client the service refuses gets its answer, with the listed headers only; a
    // forged header does not help.
    let refused = get(
        http,
        "ext.test",
        "/app",
        &[("X-Auth-Request-User", "alice")],
    );
    assert_eq!(refused.status, 401, "{refused:?}");
    assert_eq!(
        refused.headers.get("www-authenticate").map(String::as_str),
        Some("Bearer realm=\"fake\"")
    );
    assert_eq!(refused.headers.get("x-secret-debug"), None);
    assert_eq!(refused.body, "denied");

    // auth-signin: a refused client is redirected, with its host and path.
    let redirected = get(http, "signin.test", "/private/page", &[]);
    assert_eq!(redirected.status, 302, "{redirected:?}");
    assert_eq!(
        redirected.headers.get("location").map(String::as_str),
        Some("https://auth.example.com/oauth2/start?rd=signin.test/private/page")
    );
    assert!(auth.last_request()[0].starts_with("HEAD /oauth2/auth "));
    let signed_in = get(http, "signin.test", "/", &[("Cookie", "session=good")]);
    assert_eq!(signed_in.status, 200);

    // auth-method `*`: the client's method, or GET naming it when HAProxy's client cannot
    // send it.
    for (method, asked_as, named) in [("POST", "POST", false), ("PATCH", "GET", true)] {
        let response = http_request(
            http,
            &format!(
                "{method} / HTTP/1.1\r\nHost: any.test\r\nCookie: session=good\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            ),
        )
        .unwrap();
        assert_eq!(response.status, 200, "{method}: {response:?}");
        let asked = auth.last_request();
        assert!(
            asked[0].starts_with(&format!("{asked_as} /oauth2/auth ")),
            "{method}: {asked:?}"
        );
        assert_eq!(
            asked
                .iter()
                .any(|l| l.eq_ignore_ascii_case(&format!("x-forwarded-method: {method}"))),
            named,
            "{method}: {asked:?}"
        );
    }

    // A Service named by svc:// is asked at its cluster IP.
    assert_eq!(get(http, "svc.test", "/", &[]).status, 401);
    assert_eq!(
        get(http, "svc.test", "/", &[("Cookie", "session=good")]).status,
        200
    );
    assert_eq!(get(http, "nosvc.test", "/", &[]).status, 403);

    // A service that is down, or slower than auth-timeout, fails closed with 503.
    let unavailable = get(http, "down.test", "/", &[("Cookie", "session=good")]);
    assert_eq!(unavailable.status, 503, "{unavailable:?}");
    let garbled = get(http, "garbage.test", "/", &[("Cookie", "session=good")]);
    assert_eq!(
        garbled.status, 503,
        "a service that does not speak HTTP: {garbled:?}"
    );
    // An https service is verified against the system's CAs: a self-signed one is not
    // trusted, and the path fails closed.
    let untrusted = get(http, "untrusted.test", "/", &[]);
    assert_eq!(untrusted.status, 503, "{untrusted:?}");
    // An auth-url that cannot be read closes its path.
    assert_eq!(get(http, "badurl.test", "/", &[]).status, 403);
    assert_eq!(get(http, "oauth.test", "/", &[]).status, 403);
    assert_eq!(get(http, "oauth-other.test", "/", &[]).status, 403);
    let log = portcullis.log();
    for expected in [
        "Ingress default/oauth: metadata.annotations[haproxy-ingress.github.io/oauth]: the Ingress has no path '/oauth2' of a Service port for oauth2-proxy (oauth-uri-prefix); the path answers 403 to every request",
        "Ingress default/oauth-other: metadata.annotations[haproxy-ingress.github.io/oauth]: invalid value: 'keycloak' is not oauth2_proxy, the one implementation there is; the paths it applies to answer 403 to every request until it is fixed",
    ] {
        assert!(log.contains(expected), "{expected}\n{log}");
    }
    // oauth2-proxy checks every other path of the Ingress; a client it refuses is sent to
    // its sign-in, one it accepts reaches the backend with the user's email.
    let refused = get(http, "oauth-ok.test", "/private?x=1", &[]);
    assert_eq!(
        (
            refused.status,
            refused.headers.get("location").map(String::as_str)
        ),
        (302, Some("/oauth2/start?rd=/private")),
        "{refused:?}"
    );
    let asked = auth.last_request();
    assert!(asked[0].ends_with(" /oauth2/auth HTTP/1.1"), "{asked:?}");
    let accepted = get(
        http,
        "oauth-ok.test",
        "/private",
        &[
            ("Cookie", "session=good"),
            ("X-Auth-Request-Email", "mallory@example.com"),
        ],
    );
    assert_eq!(accepted.status, 200, "{accepted:?}");
    assert_eq!(
        seen_header(&accepted, "x-auth-request-email").as_deref(),
        Some("alice@example.com")
    );
    assert_eq!(seen_header(&accepted, "x-auth-request-user"), None);
    // oauth2-proxy's own path is not checked: it is routed to it (no endpoint here: 503).
    assert_eq!(get(http, "oauth-ok.test", "/oauth2/start", &[]).status, 503);
    let started = Instant::now();
    let slow = get(http, "slow.test", "/", &[("Cookie", "session=good")]);
    let waited = started.elapsed();
    assert_eq!(slow.status, 503, "{slow:?}");
    assert!(
        waited >= Duration::from_millis(700) && waited < Duration::from_millis(2500),
        "auth-timeout 800ms took {waited:?}"
    );

    // A change of the Secret is applied: the old password stops working, the new works.
    let changed = objects.replace(
        &sha512_line(&users),
        &format!("alice:{}", sha512("looking-glass")),
    );
    test_support::write_manifest(&manifests, "all.yaml", &changed).unwrap();
    portcullis
        .wait_until(Duration::from_secs(20), |p| {
            get(
                p.http_port,
                "basic.test",
                "/",
                &[(
                    "Authorization",
                    &format!("Basic {}", basic("alice", "looking-glass")),
                )],
            )
            .status
                == 200
        })
        .unwrap();
    let old = get(
        portcullis.http_port,
        "basic.test",
        "/",
        &[(
            "Authorization",
            &format!("Basic {}", basic("alice", "wonderland")),
        )],
    );
    assert_eq!(old.status, 401);
    let _ = http_get(portcullis.http_port, "basic.test", "/");
}

/// The `alice:` line of an htpasswd content.
fn sha512_line(users: &str) -> String {
    users
        .lines()
        .find(|l| l.starts_with("alice:"))
        .unwrap()
        .to_owned()
}
