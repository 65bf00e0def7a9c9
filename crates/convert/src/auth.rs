//! A path's authentication from its keys: the htpasswd Secret of `auth-secret` as a
//! userlist, and the service of `auth-url`. Whatever cannot be built makes the path refuse
//! every request; it is never served unauthenticated.

use std::collections::BTreeSet;
use std::sync::Arc;

use model::{
    AuthService, BasicAuth, CertId, ExternalAuth, Password, PathAuth, QuotedWord, UserEntry,
    Userlist,
};
use resources::{Kind, Object, ObjectRef};

use crate::keys::{self, AuthUrl, KeyGroup, Keys};
use crate::lookup::Recorder;

/// Problems found, as `(key, message)`; messages never hold a password or a hash.
pub(crate) type Problems = Vec<(&'static str, String)>;

/// Where `oauth` checks a path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum OauthTarget {
    /// oauth2-proxy's Service and port (the Service of the Ingress's `oauth-uri-prefix`
    /// path).
    Service(String, u16),
    /// The path is the prefix's, or below it: oauth2-proxy's own, not checked.
    Exempt,
    /// The Ingress has no path of the prefix (or its backend is not a Service port).
    Missing,
}

/// The authentication the keys ask of a path of an object in `namespace`; `None` when
/// they ask none. `oauth` is where `oauth` would check the path.
pub(crate) fn path_auth(
    layers: &Keys<'_>,
    lookups: &mut Recorder<'_>,
    namespace: &str,
    oauth: &OauthTarget,
    problems: &mut Problems,
) -> Option<Arc<PathAuth>> {
    // Nearly every path sets none of these keys; at their defaults a path asks no
    // authentication and looks nothing up (a test holds this).
    if !layers.set_any(&PATH_AUTH_KEYS) {
        return None;
    }
    read_path_auth(layers, lookups, namespace, oauth, problems)
}

/// Every key [`path_auth`] reads. A test sets each key of every scope to each value its
/// documentation quotes, and fails when one asks for authentication without being here.
static PATH_AUTH_KEYS: KeyGroup = KeyGroup::new(&[
    &keys::AUTH_TYPE,
    &keys::AUTH_SECRET,
    &keys::AUTH_REALM,
    &keys::AUTH_URL,
    &keys::OAUTH,
    &keys::OAUTH_URI_PREFIX,
    &keys::OAUTH_HEADERS,
    &keys::AUTH_METHOD,
    &keys::AUTH_SIGNIN,
    &keys::AUTH_TIMEOUT,
    &keys::AUTH_HEADERS_REQUEST,
    &keys::AUTH_HEADERS_SUCCEED,
    &keys::AUTH_HEADERS_FAIL,
]);

/// [`path_auth`], every key read.
fn read_path_auth(
    layers: &Keys<'_>,
    lookups: &mut Recorder<'_>,
    namespace: &str,
    oauth: &OauthTarget,
    problems: &mut Problems,
) -> Option<Arc<PathAuth>> {
    let auth = PathAuth {
        basic: basic_auth(layers, lookups, namespace, problems),
        external: external_auth(layers, lookups, namespace, problems)
            .or_else(|| oauth_auth(layers, lookups, namespace, oauth, problems)),
    };
    (auth.basic.is_some() || auth.external.is_some()).then(|| Arc::new(auth))
}

fn basic_auth(
    layers: &Keys<'_>,
    lookups: &mut Recorder<'_>,
    namespace: &str,
    problems: &mut Problems,
) -> Option<BasicAuth> {
    let key = keys::AUTH_SECRET.name;
    // The invalid value itself is reported where the key is read.
    if layers.set_invalidly(&keys::AUTH_SECRET) || layers.set_invalidly(&keys::AUTH_TYPE) {
        return Some(BasicAuth::Unusable);
    }
    let Some(secret) = layers.get(&keys::AUTH_SECRET) else {
        if layers.get(&keys::AUTH_TYPE) {
            problems.push((
                keys::AUTH_TYPE.name,
                "'basic' needs auth-secret; the path answers 403 to every request".to_owned(),
            ));
            return Some(BasicAuth::Unusable);
        }
        return None;
    };
    if let Some(other) = secret.namespace.as_deref().filter(|n| *n != namespace) {
        problems.push((
            key,
            format!(
                "secret {other}/{} is not in the Ingress's namespace {namespace}; the path answers 403 to every request",
                secret.name
            ),
        ));
        return Some(BasicAuth::Unusable);
    }
    let id = CertId {
        namespace: namespace.to_owned(),
        name: secret.name,
    };
    let fields = match crate::tls::secret_fields(lookups, &id) {
        Ok(fields) => fields,
        Err(why) => {
            problems.push((key, format!("{why}; the path answers 403 to every request")));
            return Some(BasicAuth::Unusable);
        }
    };
    let Some(content) = fields.get("auth") else {
        problems.push((
            key,
            format!(
                "secret {namespace}/{} has no auth key; the path answers 403 to every request",
                id.name
            ),
        ));
        return Some(BasicAuth::Unusable);
    };
    let users = parse_htpasswd(
        content,
        &format!("secret {namespace}/{}", id.name),
        problems,
    );
    if users.is_empty() {
        problems.push((
            key,
            format!(
                "secret {namespace}/{} has no usable user; the path answers 403 to every request",
                id.name
            ),
        ));
        return Some(BasicAuth::Unusable);
    }
    Some(BasicAuth::Users {
        userlist: Arc::new(Userlist {
            namespace: id.namespace,
            secret: id.name,
            users,
        }),
        realm: layers.get(&keys::AUTH_REALM),
    })
}

/// Reads the `auth` key of an htpasswd Secret: `user:hash` or `user::password` a line.
/// Lines that cannot be used are reported (by number and user) and left out.
pub(crate) fn parse_htpasswd(
    content: &[u8],
    secret: &str,
    problems: &mut Problems,
) -> Vec<UserEntry> {
    let key = keys::AUTH_SECRET.name;
    let mut users: Vec<UserEntry> = Vec::new();
    let mut seen = BTreeSet::new();
    for (index, line) in content.split(|b| *b == b'\n').enumerate() {
        let number = index + 1;
        let Ok(line) = std::str::from_utf8(line) else {
            problems.push((
                key,
                format!("{secret}, line {number}: not UTF-8; the line is left out"),
            ));
            continue;
        };
        let line = line.trim_end_matches('\r');
        if line.trim().is_empty() {
            continue;
        }
        let Some((user, rest)) = line.split_once(':') else {
            problems.push((
                key,
                format!("{secret}, line {number}: no ':' between user and password; the line is left out"),
            ));
            continue;
        };
        let name = match QuotedWord::new(user) {
            Ok(name) if !user.contains(char::is_whitespace) => name,
            _ => {
                problems.push((
                    key,
                    format!(
                        "{secret}, line {number}: the user name is empty or holds a space, a quote, a backslash or a control character; the line is left out"
                    ),
                ));
                continue;
            }
        };
        let password = match rest.strip_prefix(':') {
            Some(plain) => match QuotedWord::new(plain) {
                Ok(plain) => Password::Plain(plain),
                Err(_) => {
                    problems.push((
                        key,
                        format!(
                            "{secret}, line {number}: the plain-text password of user '{user}' is empty or holds a quote, a backslash or a control character; the line is left out"
                        ),
                    ));
                    continue;
                }
            },
            None => {
                match check_hash(rest) {
                    Ok(hash) => Password::Hash(hash),
                    Err(why) => {
                        problems.push((
                        key,
                        format!("{secret}, line {number}: user '{user}': {why}; the line is left out"),
                    ));
                        continue;
                    }
                }
            }
        };
        if !seen.insert(user.to_owned()) {
            problems.push((
                key,
                format!(
                    "{secret}, line {number}: user '{user}' is listed twice; the first line is used"
                ),
            ));
            continue;
        }
        users.push(UserEntry { name, password });
    }
    users
}

/// Characters of crypt(3) hashes.
fn crypt_characters(text: &str) -> bool {
    text.bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'/' | b'$' | b'=' | b','))
}

/// Checks that a hash is one HAProxy's C library (libxcrypt) checks. Measured with
/// HAProxy 2.6.12 on Debian 12: `$6$`, `$5$`, `$2a$`, `$2b$`, `$2y$`, `$y$`, `$1$` and
/// DES hashes let the right password in; `$apr1$` never does.
fn check_hash(hash: &str) -> Result<QuotedWord, String> {
    let described = if hash.starts_with("$apr1$") {
        Err("an Apache MD5 ($apr1$) hash, which HAProxy's C library cannot check; hash the password with `htpasswd -B` (bcrypt) or `mkpasswd -m sha-512`".to_owned())
    } else if hash.starts_with("{SHA}") {
        Err("an Apache SHA-1 ({SHA}) hash, which HAProxy's C library cannot check; hash the password with `htpasswd -B` (bcrypt) or `mkpasswd -m sha-512`".to_owned())
    } else if ["$6$", "$5$", "$2a$", "$2b$", "$2y$", "$y$", "$1$"]
        .iter()
        .any(|prefix| hash.starts_with(prefix))
        || (hash.len() == 13 && !hash.contains('$'))
    {
        Ok(())
    } else if hash.is_empty() {
        Err("no password hash".to_owned())
    } else {
        Err("not a password hash HAProxy can check (SHA-512, SHA-256, bcrypt, yescrypt, MD5 or DES crypt)".to_owned())
    };
    described?;
    if !crypt_characters(hash) {
        return Err("the hash holds characters no crypt hash holds".to_owned());
    }
    QuotedWord::new(hash).map_err(|_| "the hash is too long".to_owned())
}

fn external_auth(
    layers: &Keys<'_>,
    lookups: &mut Recorder<'_>,
    namespace: &str,
    problems: &mut Problems,
) -> Option<ExternalAuth> {
    let key = keys::AUTH_URL.name;
    // The invalid value itself is reported where the key is read.
    if layers.set_invalidly(&keys::AUTH_URL) {
        return Some(ExternalAuth::Unusable);
    }
    let url = match layers.get(&keys::AUTH_URL)? {
        AuthUrl::Http(url) => url,
        AuthUrl::Service {
            namespace: wanted,
            name,
            port,
            path,
        } => match service_url(lookups, namespace, wanted.as_deref(), &name, port, &path) {
            Ok(url) => url,
            Err(why) => {
                problems.push((key, format!("{why}; the path answers 403 to every request")));
                return Some(ExternalAuth::Unusable);
            }
        },
    };
    let signin = layers.get(&keys::AUTH_SIGNIN);
    if signin.is_some() && layers.explicit(&keys::AUTH_HEADERS_FAIL).is_some() {
        problems.push((
            keys::AUTH_HEADERS_FAIL.name,
            "not used with auth-signin: a refused client is redirected".to_owned(),
        ));
    }
    let headers_succeed = layers.get(&keys::AUTH_HEADERS_SUCCEED);
    Some(service_auth(layers, url, headers_succeed, signin))
}

/// The external authentication by the service at `url`, the other keys read from
/// `layers`.
fn service_auth(
    layers: &Keys<'_>,
    url: QuotedWord,
    headers_succeed: QuotedWord,
    signin: Option<QuotedWord>,
) -> ExternalAuth {
    let total = layers.get(&keys::AUTH_TIMEOUT).to_std().as_millis();
    let attempt_timeout_ms = u32::try_from(total / 4).unwrap_or(u32::MAX).max(1);
    ExternalAuth::Service(Arc::new(AuthService {
        url,
        method: layers.get(&keys::AUTH_METHOD),
        headers_request: layers.get(&keys::AUTH_HEADERS_REQUEST),
        headers_succeed,
        headers_fail: layers.get(&keys::AUTH_HEADERS_FAIL),
        signin,
        attempt_timeout_ms,
    }))
}

/// haproxy-ingress's `oauth`: the external authentication of oauth2-proxy at the Service
/// of the Ingress's `oauth-uri-prefix` path, for the paths that `auth-url` leaves unset.
fn oauth_auth(
    layers: &Keys<'_>,
    lookups: &mut Recorder<'_>,
    namespace: &str,
    target: &OauthTarget,
    problems: &mut Problems,
) -> Option<ExternalAuth> {
    let key = keys::OAUTH.name;
    // The invalid value itself is reported where the key is read.
    if layers.set_invalidly(&keys::OAUTH) {
        return Some(ExternalAuth::Unusable);
    }
    if !layers.get(&keys::OAUTH) {
        return None;
    }
    let prefix = layers.get(&keys::OAUTH_URI_PREFIX);
    let (service, port) = match target {
        OauthTarget::Exempt => return None,
        OauthTarget::Missing => {
            problems.push((
                key,
                format!("the Ingress has no path '{prefix}' of a Service port for oauth2-proxy (oauth-uri-prefix); the path answers 403 to every request"),
            ));
            return Some(ExternalAuth::Unusable);
        }
        OauthTarget::Service(service, port) => (service.as_str(), *port),
    };
    let url = match service_url(
        lookups,
        namespace,
        None,
        service,
        port,
        &format!("{prefix}/auth"),
    ) {
        Ok(url) => url,
        Err(why) => {
            problems.push((key, format!("{why}; the path answers 403 to every request")));
            return Some(ExternalAuth::Unusable);
        }
    };
    // Checked characters only, as `oauth-uri-prefix` holds: no quote to escape.
    let signin = QuotedWord::new(&format!("{prefix}/start?rd=%[path]")).ok();
    let headers_succeed = layers.get(&keys::OAUTH_HEADERS);
    Some(service_auth(layers, url, headers_succeed, signin))
}

/// The URL of a Service port at its cluster IP.
fn service_url(
    lookups: &mut Recorder<'_>,
    namespace: &str,
    wanted: Option<&str>,
    name: &str,
    port: u16,
    path: &str,
) -> Result<QuotedWord, String> {
    if let Some(other) = wanted.filter(|n| *n != namespace) {
        return Err(format!(
            "service {other}/{name} is not in the Ingress's namespace {namespace}"
        ));
    }
    let Some(Object::Service(service)) =
        lookups.get(ObjectRef::new(Kind::Service, namespace, name))
    else {
        return Err(format!("service {namespace}/{name} not found"));
    };
    let spec = service.spec.as_ref();
    let declares_port = spec
        .and_then(|s| s.ports.as_ref())
        .is_some_and(|ports| ports.iter().any(|p| p.port == i32::from(port)));
    if !declares_port {
        return Err(format!("service {namespace}/{name} has no port {port}"));
    }
    let cluster_ip = spec
        .and_then(|s| s.cluster_ip.as_deref())
        .filter(|ip| !ip.is_empty() && *ip != "None");
    let Some(address) = cluster_ip.and_then(|ip| ip.parse::<std::net::IpAddr>().ok()) else {
        return Err(format!(
            "service {namespace}/{name} has no cluster IP (a headless Service cannot be an auth-url)"
        ));
    };
    let host = match address {
        std::net::IpAddr::V4(v4) => v4.to_string(),
        std::net::IpAddr::V6(v6) => format!("[{v6}]"),
    };
    QuotedWord::new(&format!("http://{host}:{port}{path}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every key of every scope, set alone in each layer to each value its documentation
    /// quotes and to one it refuses: the authentication read key by key and the one
    /// skipped when no layer sets an authentication key agree (in what they ask, report
    /// and look up), and a key that asks for any is one `path_auth` knows it reads.
    #[test]
    fn a_path_whose_layers_set_no_auth_key_asks_none() {
        let snapshot = index::Index::new().snapshot();
        let options = crate::cache::tests::options();
        let ports = options.listener_ports();
        let port_protocols =
            crate::gateway::listener::PortProtocols::of_our_gateways(&snapshot, &ports);
        let mut asked = 0;
        keys::every_key_set_alone(|layers, key, case| {
            let context = crate::lookup::Context {
                snapshot: &snapshot,
                options: &options,
                listener_ports: &ports,
                port_protocols: &port_protocols,
                global: layers.global,
                configmap: None,
                recording: true,
            };
            let (mut read_lookups, mut lookups) = (Recorder::new(context), Recorder::new(context));
            let (mut read_problems, mut problems) = (Vec::new(), Vec::new());
            let oauth = OauthTarget::Service("oauth2-proxy".to_owned(), 4180);
            let read = read_path_auth(
                layers,
                &mut read_lookups,
                "shop",
                &oauth,
                &mut read_problems,
            );
            let auth = path_auth(layers, &mut lookups, "shop", &oauth, &mut problems);
            assert_eq!(
                (&auth, &problems, &lookups.dependencies),
                (&read, &read_problems, &read_lookups.dependencies),
                "{case}"
            );
            if read.is_some() || !read_problems.is_empty() || !read_lookups.dependencies.is_empty()
            {
                asked += 1;
                assert!(PATH_AUTH_KEYS.holds(key), "{case} asks for authentication");
            }
        });
        // The sweep reaches authentication: basic and external each ask for some.
        assert!(asked > 20, "{asked}");
    }

    fn read(text: &str) -> (Vec<String>, Vec<String>) {
        let mut problems = Vec::new();
        let users = parse_htpasswd(text.as_bytes(), "secret web/users", &mut problems);
        (
            users.iter().map(|u| u.name.as_str().to_owned()).collect(),
            problems.into_iter().map(|(_, m)| m).collect(),
        )
    }

    #[test]
    fn htpasswd_lines_of_every_supported_hash_are_read() {
        let (users, problems) = read(
            "a:$6$saltsalt$TVLlQcbpFVof5W3Yz4DTP6gRstiNuHwwTt6GLc1E5n0U0aDehy0S5knV8wiOQSpT0Y77vwPZN.Pq.H91p5hVO1\r\n\
             b:$5$saltsalt$0IyaXrmV7.sGNS6tirgqHLqX/G.FBvgkYA.lpPdS5sA\n\
             c:$2y$05$abcdefghijklmnopqrstuuOQiyCxlgf/oeuTqixKmWdcYUh4Hjl0a\n\
             \n\
             d:$1$saltsalt$9xy1btjgzLYfb7hivXtC//\n\
             e:abNANd1rDfiNc\n\
             f::plain secret\n",
        );
        assert_eq!(users, ["a", "b", "c", "d", "e", "f"]);
        assert!(problems.is_empty(), "{problems:?}");
    }

    #[test]
    fn malformed_lines_are_reported_by_number_without_their_hash() {
        let (users, problems) = read(
            "good:$6$s$h\n\
             apache:$apr1$saltsalt$LrttParrLPdxvgutaSXWJ0\n\
             nocolon\n\
             :$6$s$h\n\
             sha:{SHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g=\n\
             weird:$zz$abc\n\
             good:$5$s$h\n\
             q::pa'ss\n",
        );
        assert_eq!(users, ["good"]);
        assert_eq!(
            problems,
            [
                "secret web/users, line 2: user 'apache': an Apache MD5 ($apr1$) hash, which HAProxy's C library cannot check; hash the password with `htpasswd -B` (bcrypt) or `mkpasswd -m sha-512`; the line is left out",
                "secret web/users, line 3: no ':' between user and password; the line is left out",
                "secret web/users, line 4: the user name is empty or holds a space, a quote, a backslash or a control character; the line is left out",
                "secret web/users, line 5: user 'sha': an Apache SHA-1 ({SHA}) hash, which HAProxy's C library cannot check; hash the password with `htpasswd -B` (bcrypt) or `mkpasswd -m sha-512`; the line is left out",
                "secret web/users, line 6: user 'weird': not a password hash HAProxy can check (SHA-512, SHA-256, bcrypt, yescrypt, MD5 or DES crypt); the line is left out",
                "secret web/users, line 7: user 'good' is listed twice; the first line is used",
                "secret web/users, line 8: the plain-text password of user 'q' is empty or holds a quote, a backslash or a control character; the line is left out",
            ]
        );
        assert!(
            problems
                .iter()
                .all(|p| !p.contains("LrttParr") && !p.contains("pa'ss"))
        );
    }
}
