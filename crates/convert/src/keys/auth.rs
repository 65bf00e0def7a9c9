//! Keys of path authentication: HTTP Basic (`auth-secret`, `auth-realm`) and an external
//! service (`auth-url` and the keys that shape its request and answer).

use model::{HaproxyDuration, QuotedWord};

use super::backend_tls::{SecretName, parse_secret_name};
use super::parse::parse_duration;
use super::{Applied, Key, Scope};

/// Keys whose invalid value closes the paths they apply to (403) instead of falling back
/// to a wider layer's value: a typo must never serve a path without its authentication.
pub(crate) const FAIL_CLOSED: [&str; 4] = ["auth-type", "auth-secret", "auth-url", "oauth"];

/// `auth-type`.
pub static AUTH_TYPE: Key<bool> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "auth-type",
    scope: Scope::Path,
    default: "",
    accepted_values: "`basic`, or empty",
    parse: parse_auth_type,
    doc: "Deprecated: `auth-secret` alone turns Basic authentication on. `basic` without `auth-secret` refuses every request of the path (403) rather than serve it unauthenticated.",
    applied: Applied::Reload,
    differs: "",
};
/// `oauth`.
pub static OAUTH: Key<bool> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "oauth",
    scope: Scope::Path,
    default: "",
    accepted_values: "`oauth2_proxy` (or `oauth2-proxy`), or empty for none",
    parse: parse_oauth,
    doc: "Authentication by oauth2-proxy serving `oauth-uri-prefix` on the Ingress's own hosts: every other path of the Ingress is first checked with `<oauth-uri-prefix>/auth` of the Service of that path (at its cluster IP, the client's `Cookie` passed), as `auth-url` would; a 2xx lets the request through with the `oauth-headers` of the answer, any other answer but 5xx redirects the client to `<oauth-uri-prefix>/start?rd=<path>`, and a 5xx or no answer is a 503. The Ingress must have a path of `oauth-uri-prefix` (otherwise, or with any other value, its paths answer 403). `auth-url`, when set, is used instead.",
    applied: Applied::Reload,
    differs: "haproxy-ingress checks with oauth2-proxy's endpoints through that path's backend; portcullis reaches the Service at its cluster IP, as `auth-url`'s `svc://`.",
};
/// `oauth-uri-prefix`.
pub static OAUTH_URI_PREFIX: Key<String> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "oauth-uri-prefix",
    scope: Scope::Path,
    default: "/oauth2",
    accepted_values: "a path such as `/oauth2`",
    parse: parse_oauth_prefix,
    doc: "Where the Ingress serves oauth2-proxy, for `oauth`: a path of the Ingress with this value (its paths and those below it are not checked themselves).",
    applied: Applied::Reload,
    differs: "",
};
/// `oauth-headers`.
pub static OAUTH_HEADERS: Key<QuotedWord> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "oauth-headers",
    scope: Scope::Path,
    default: "X-Auth-Request-Email",
    accepted_values: "a comma-separated list of header names such as `X-Auth-Request-User,X-Auth-Request-Email`",
    parse: parse_oauth_headers,
    doc: "With `oauth`, the headers of oauth2-proxy's answer copied to the request sent to the backend (the client's own copies removed first), as `auth-headers-succeed` does.",
    applied: Applied::Reload,
    differs: "haproxy-ingress also takes `<header>:<source>`, copying another header or a HAProxy variable; portcullis copies headers of the same name only, and reports the other form.",
};
/// `auth-secret`.
pub static AUTH_SECRET: Key<Option<SecretName>> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "auth-secret",
    scope: Scope::Path,
    default: "",
    accepted_values: "a Secret name such as `users`, or `namespace/name` in the Ingress's own namespace; empty for none",
    parse: parse_secret_name,
    doc: "HTTP Basic authentication: the Secret's `auth` key lists the users, one a line, as `user:hash` (a crypt(3) hash: SHA-512 `$6$`, SHA-256 `$5$`, bcrypt `$2a$`/`$2b$`/`$2y$`, yescrypt `$y$`, MD5 `$1$` or DES) or `user::password` (plain text). Apache's `$apr1$` and `{SHA}` hashes cannot be checked by HAProxy: such users are left out and reported. A request without valid credentials gets 401 with `WWW-Authenticate`. A Secret that is missing, in another namespace, or without one usable user, or a value that cannot be read, makes the path answer 403 to every request. A change of the Secret is applied by a reload.",
    applied: Applied::Reload,
    differs: "haproxy-ingress also accepts `file://` paths and, with cross-namespace access, Secrets of other namespaces; portcullis reads only Secrets of the Ingress's namespace, so that an annotation cannot read another tenant's Secret or a file of the controller's host.",
};
/// `auth-realm`.
pub static AUTH_REALM: Key<QuotedWord> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "auth-realm",
    scope: Scope::Path,
    default: "localhost",
    accepted_values: "a text such as `Staff only`, without quotes, backslashes or control characters, up to 1024 bytes",
    parse: parse_realm,
    doc: "The realm of HTTP Basic authentication, shown by browsers.",
    applied: Applied::Reload,
    differs: "",
};
/// `auth-url`.
pub static AUTH_URL: Key<Option<AuthUrl>> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "auth-url",
    scope: Scope::Path,
    default: "",
    accepted_values: "an http or https URL such as `http://oauth2-proxy.auth.svc:4180/oauth2/auth` or `https://10.0.0.2/auth`, or a Service of the Ingress's namespace and its port as svc://service:port/path, such as `svc://oauth2-proxy:4180/oauth2/auth` (alias service://); empty for none",
    parse: parse_auth_url,
    doc: "External authentication: every request of the path is first sent (without its body) to this service; a 2xx answer lets it through, any other answer is the client's answer (or a redirect to `auth-signin`). A service that refuses the connection, answers 5xx or does not answer within `auth-timeout` makes the path answer 503; an `auth-url` that cannot be used (a value that cannot be read, a Service that does not exist) makes it answer 403. `svc://` names a Service of the Ingress's namespace and one of its ports; it is reached at its cluster IP.",
    applied: Applied::Reload,
    differs: "haproxy-ingress resolves an `http(s)` host name once, when the Ingress is read, and reaches `svc://` Services through their endpoints (honouring `secure-backends` on them); portcullis lets HAProxy resolve host names at run time (by the name servers of `/etc/resolv.conf`, not `/etc/hosts`), reaches a Service at its cluster IP over plain HTTP (headless Services are refused), accepts no other namespace, and checks `https` certificates against the system's CAs where haproxy-ingress does not check them.",
};
/// `auth-method`.
pub static AUTH_METHOD: Key<QuotedWord> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "auth-method",
    scope: Scope::Path,
    default: "GET",
    accepted_values: "`GET`, `HEAD`, `POST`, `PUT`, `DELETE` (in any case), or `*` for the client's own method",
    parse: parse_auth_method,
    doc: "The method of the request to the authentication service. With `*`, a client method HAProxy's HTTP client cannot send (such as `PATCH` or `OPTIONS`) is sent as `GET` with the header `X-Forwarded-Method` naming it.",
    applied: Applied::Reload,
    differs: "haproxy-ingress accepts any method name; HAProxy 2.6's HTTP client, which portcullis uses, sends only these five.",
};
/// `auth-signin`.
pub static AUTH_SIGNIN: Key<Option<QuotedWord>> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "auth-signin",
    scope: Scope::Path,
    default: "",
    accepted_values: "a URL such as `https://auth.example.com/oauth2/start?rd=%[hdr(host)]%[path]`, where %[...] inserts one of HAProxy's request samples path, url, base, query, hdr(name), req.hdr(name), capture.req.uri or ssl_fc, optionally through the converters url_enc, lower or iif(a,b); empty for none",
    parse: parse_signin,
    doc: "Where a client the authentication service refused (any answer but 2xx and 5xx) is redirected with 302, such as oauth2-proxy's `https://auth.example.com/oauth2/start?rd=%[hdr(host)]%[path]`. `auth-headers-fail` is then not used.",
    applied: Applied::Reload,
    differs: "haproxy-ingress accepts any log-format string; portcullis accepts only the request samples listed, so that an annotation cannot copy the proxy's environment or variables into a response.",
};
/// `auth-headers-request`.
pub static AUTH_HEADERS_REQUEST: Key<QuotedWord> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "auth-headers-request",
    scope: Scope::Path,
    default: "*",
    accepted_values: "a comma-separated list of header names such as `X-Auth-Request-User,X-Auth-Request-Email`, where * and ? are wildcards (`*`: all, `X-Auth-*`); `-` or empty for none",
    parse: parse_header_globs,
    doc: "The client's request headers copied to the authentication service (never `Host` or `Content-Length`).",
    applied: Applied::Reload,
    differs: "",
};
/// `auth-headers-succeed`.
pub static AUTH_HEADERS_SUCCEED: Key<QuotedWord> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "auth-headers-succeed",
    scope: Scope::Path,
    default: "*",
    accepted_values: "a comma-separated list of header names such as `X-Auth-Request-User,X-Auth-Request-Email`, where * and ? are wildcards (`*`: all, `X-Auth-*`); `-` or empty for none",
    parse: parse_header_globs,
    doc: "The authentication service's response headers copied to the request sent to the backend when it lets the request through, such as oauth2-proxy's `X-Auth-Request-User,X-Auth-Request-Email`. Headers of the client matching a list without wildcards are removed first, so a client cannot forge them. Framing and connection headers (`Content-Length`, `Content-Type`, `Transfer-Encoding`, `Connection`, `Date`, ...) are never copied.",
    applied: Applied::Reload,
    differs: "haproxy-ingress copies every header of the answer, `Content-Type` and `Date` included, and leaves the client's own headers of the same names in place when the service does not set them.",
};
/// `auth-headers-fail`.
pub static AUTH_HEADERS_FAIL: Key<QuotedWord> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "auth-headers-fail",
    scope: Scope::Path,
    default: "*",
    accepted_values: "a comma-separated list of header names such as `X-Auth-Request-User,X-Auth-Request-Email`, where * and ? are wildcards (`*`: all, `X-Auth-*`); `-` or empty for none",
    parse: parse_header_globs,
    doc: "The authentication service's response headers copied to the client when it refuses the request (such as `WWW-Authenticate` or `Set-Cookie`); not used with `auth-signin`.",
    applied: Applied::Reload,
    differs: "",
};
/// `auth-timeout`.
pub static AUTH_TIMEOUT: Key<HaproxyDuration> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "auth-timeout",
    scope: Scope::Path,
    default: "2s",
    accepted_values: "a duration from `4ms` to `1h`, such as `500ms` or `2s`",
    parse: parse_auth_timeout,
    doc: "How long the authentication service may take to answer, in all: HAProxy 2.6's HTTP client tries a request up to four times, so each attempt gets a quarter of it. When it passes, the path answers 503. It does not bound the TCP handshake: an address that never completes one is given up after about 20 s (HAProxy 2.6's fixed 5 s connect time, four attempts).",
    applied: Applied::Reload,
    differs: "portcullis's own key: haproxy-ingress has no time limit of its own for the authentication request.",
};

/// Where `auth-url` sends the authentication request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuthUrl {
    /// An `http://` or `https://` URL, checked.
    Http(QuotedWord),
    /// A Service of the cluster.
    Service {
        /// Its namespace, when given.
        namespace: Option<String>,
        /// Its name.
        name: String,
        /// The Service port.
        port: u16,
        /// The path, starting with `/`.
        path: String,
    },
}

fn parse_auth_type(text: &str) -> Result<bool, String> {
    match text.trim() {
        "" => Ok(false),
        t if t.eq_ignore_ascii_case("basic") => Ok(true),
        other => Err(format!("'{other}' is not basic")),
    }
}

fn parse_oauth(text: &str) -> Result<bool, String> {
    match text.trim() {
        "" => Ok(false),
        "oauth2_proxy" | "oauth2-proxy" => Ok(true),
        other => Err(format!(
            "'{}' is not oauth2_proxy, the one implementation there is",
            other.escape_debug()
        )),
    }
}

fn parse_oauth_prefix(text: &str) -> Result<String, String> {
    let prefix = super::parse::parse_url_path(text.trim())?.unwrap_or_default();
    let prefix = prefix.trim_end_matches('/');
    // `/` would make every path oauth2-proxy's own, and none checked.
    if prefix.is_empty() {
        return Err("the prefix must name a path below / (such as /oauth2)".to_owned());
    }
    Ok(prefix.to_owned())
}

fn parse_oauth_headers(text: &str) -> Result<QuotedWord, String> {
    if text.contains(':') {
        return Err(
            "<header>:<source> is not supported: name the headers of oauth2-proxy's answer to copy as they are".to_owned(),
        );
    }
    parse_header_globs(text)
}

fn parse_realm(text: &str) -> Result<QuotedWord, String> {
    QuotedWord::new(text.trim()).map_err(|why| format!("the realm {why}"))
}

fn parse_auth_method(text: &str) -> Result<QuotedWord, String> {
    let method = text.trim().to_ascii_uppercase();
    match method.as_str() {
        "GET" | "HEAD" | "POST" | "PUT" | "DELETE" | "*" => {
            QuotedWord::new(&method).map_err(|why| format!("the method {why}"))
        }
        _ => Err(format!(
            "'{}' is not GET, HEAD, POST, PUT, DELETE or *",
            text.escape_debug()
        )),
    }
}

fn parse_header_globs(text: &str) -> Result<QuotedWord, String> {
    let text = text.trim();
    if text.is_empty() || text == "-" {
        return QuotedWord::new("-");
    }
    let mut names = Vec::new();
    for name in text.split(',').map(str::trim) {
        let valid = !name.is_empty()
            && name.len() <= 128
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'*' | b'?'));
        if !valid {
            return Err(format!(
                "'{}' is not a header name (letters, digits, '-', '_', and the wildcards '*' and '?')",
                name.escape_debug()
            ));
        }
        names.push(name.to_ascii_lowercase());
    }
    QuotedWord::new(&names.join(",")).map_err(|why| format!("the list {why}"))
}

fn parse_auth_timeout(text: &str) -> Result<HaproxyDuration, String> {
    let duration = parse_duration(text)?;
    let millis = duration.to_std().as_millis();
    if !(4..=3_600_000).contains(&millis) {
        return Err(format!("'{}' is not from 4ms to 1h", text.escape_debug()));
    }
    Ok(duration)
}

/// Host names and IP literals of `http(s)` URLs: DNS characters, or an IPv6 literal.
fn valid_url_host(host: &str) -> bool {
    if let Some(inner) = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        return inner.parse::<std::net::Ipv6Addr>().is_ok();
    }
    (1..=253).contains(&host.len())
        && host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.'))
        && !host.starts_with(['-', '.'])
}

/// A URL path: printable ASCII without spaces, quotes, backslashes or `#`.
fn valid_url_path(path: &str) -> bool {
    path.starts_with('/')
        && path
            .bytes()
            .all(|b| b.is_ascii_graphic() && !matches!(b, b'\'' | b'"' | b'\\' | b'#'))
}

fn split_port(authority: &str) -> Result<(&str, Option<u16>), String> {
    // An IPv6 literal holds colons of its own.
    let port_at = match authority.rfind(']') {
        Some(end) => authority[end..].find(':').map(|i| i + end),
        None => authority.rfind(':'),
    };
    match port_at {
        None => Ok((authority, None)),
        Some(at) => {
            let port = &authority[at + 1..];
            match port.parse::<u16>() {
                Ok(p) if p > 0 => Ok((&authority[..at], Some(p))),
                _ => Err(format!("'{}' is not a port", port.escape_debug())),
            }
        }
    }
}

fn parse_auth_url(text: &str) -> Result<Option<AuthUrl>, String> {
    let text = text.trim();
    if text.is_empty() {
        return Ok(None);
    }
    let bad = |why: &str| format!("'{}' {why}", text.escape_debug());
    let Some((scheme, rest)) = text.split_once("://") else {
        return Err(bad("is not a URL (http://, https:// or svc://)"));
    };
    let (authority, path) = match rest.find('/') {
        Some(at) => (&rest[..at], &rest[at..]),
        None => (rest, "/"),
    };
    if !valid_url_path(path) {
        return Err(bad("has a path with characters a URL cannot hold"));
    }
    let (host, port) =
        split_port(authority).map_err(|why| bad(&format!("has a bad port: {why}")))?;
    match scheme.to_ascii_lowercase().as_str() {
        "http" | "https" => {
            if !valid_url_host(host) {
                return Err(bad("has no valid host name or IP address"));
            }
            let scheme = scheme.to_ascii_lowercase();
            let port = port.map(|p| format!(":{p}")).unwrap_or_default();
            let url = format!("{scheme}://{}{port}{path}", host.to_ascii_lowercase());
            QuotedWord::new(&url)
                .map(|url| Some(AuthUrl::Http(url)))
                .map_err(|why| bad(&why))
        }
        "svc" | "service" => {
            let Some(port) = port else {
                return Err(bad("names no Service port (svc://service:port/path)"));
            };
            let name = parse_secret_name(host)
                .ok()
                .flatten()
                .ok_or_else(|| bad("does not name a Service"))?;
            Ok(Some(AuthUrl::Service {
                namespace: name.namespace,
                name: name.name,
                port,
                path: path.to_owned(),
            }))
        }
        _ => Err(bad("is not an http://, https:// or svc:// URL")),
    }
}

/// Request samples a sign-in URL may insert.
const SIGNIN_SAMPLES: [&str; 8] = [
    "path",
    "url",
    "base",
    "query",
    "capture.req.uri",
    "ssl_fc",
    "hdr",
    "req.hdr",
];
/// Converters a sign-in URL may apply to them.
const SIGNIN_CONVERTERS: [&str; 3] = ["url_enc", "lower", "iif"];

/// A sample expression such as `hdr(host),lower`: allowed names, arguments of letters,
/// digits, `-`, `_` and `.`.
fn valid_sample(expression: &str) -> bool {
    let mut parts = expression.split(',');
    let allowed = |part: &str, names: &[&str]| {
        let (name, argument) = match part.split_once('(') {
            Some((name, rest)) => match rest.strip_suffix(')') {
                Some(argument) => (name, Some(argument)),
                None => return false,
            },
            None => (part, None),
        };
        names.contains(&name)
            && argument.is_none_or(|a| {
                !a.is_empty()
                    && a.bytes().all(|b| {
                        b.is_ascii_alphanumeric()
                            || matches!(b, b'-' | b'_' | b'.' | b',' | b':' | b'/')
                    })
            })
    };
    let Some(first) = parts.next() else {
        return false;
    };
    // `iif(a,b)` holds a comma of its own: join it back before checking.
    let rest: Vec<&str> = parts.collect();
    let mut converters = Vec::new();
    let mut index = 0;
    while index < rest.len() {
        let part = rest[index];
        if part.starts_with("iif(") && !part.ends_with(')') && index + 1 < rest.len() {
            converters.push(format!("{part},{}", rest[index + 1]));
            index += 2;
        } else {
            converters.push(part.to_owned());
            index += 1;
        }
    }
    allowed(first, &SIGNIN_SAMPLES) && converters.iter().all(|c| allowed(c, &SIGNIN_CONVERTERS))
}

/// Checks a sign-in URL and writes it as a log-format string: a `%` that does not open
/// `%[` is literal (`%%`).
fn parse_signin(text: &str) -> Result<Option<QuotedWord>, String> {
    let text = text.trim();
    if text.is_empty() {
        return Ok(None);
    }
    let bad = |why: &str| format!("'{}' {why}", text.escape_debug());
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('%') {
        out.push_str(&rest[..at]);
        let after = &rest[at..];
        if let Some(expression) = after.strip_prefix("%[") {
            let Some(end) = expression.find(']') else {
                return Err(bad("has a '%[' without its ']'"));
            };
            let sample = &expression[..end];
            if !valid_sample(sample) {
                return Err(bad(&format!(
                    "inserts '%[{}]', which is not one of the request samples a sign-in URL may use",
                    sample.escape_debug()
                )));
            }
            out.push_str("%[");
            out.push_str(sample);
            out.push(']');
            rest = &expression[end + 1..];
        } else {
            out.push_str("%%");
            rest = &after[1..];
        }
    }
    out.push_str(rest);
    if out
        .bytes()
        .any(|b| !b.is_ascii_graphic() || matches!(b, b'\'' | b'"' | b'\\'))
    {
        return Err(bad(
            "holds a space, a quote, a backslash or a non-ASCII character",
        ));
    }
    QuotedWord::new(&out).map(Some).map_err(|why| bad(&why))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basic_keys_default_as_haproxy_ingress() {
        assert!(!AUTH_TYPE.default_value());
        assert_eq!(AUTH_SECRET.default_value(), None);
        assert_eq!(AUTH_REALM.default_value().as_str(), "localhost");
        assert_eq!((AUTH_TYPE.parse)("Basic"), Ok(true));
        assert_eq!(
            (AUTH_TYPE.parse)("digest"),
            Err("'digest' is not basic".to_owned())
        );
        assert_eq!(
            (AUTH_SECRET.parse)("other/users").map(|s| s.and_then(|s| s.namespace)),
            Ok(Some("other".to_owned()))
        );
        assert!((AUTH_REALM.parse)("my \"realm\"").is_err());
        assert!((AUTH_REALM.parse)("Staff only").is_ok());
    }

    #[test]
    fn oauth_keys_read_as_haproxy_ingress_writes_them() {
        assert!(!OAUTH.default_value());
        assert_eq!((OAUTH.parse)("oauth2_proxy"), Ok(true));
        assert_eq!((OAUTH.parse)("oauth2-proxy"), Ok(true));
        assert!((OAUTH.parse)("keycloak").is_err());
        assert_eq!(OAUTH_URI_PREFIX.default_value(), "/oauth2");
        assert_eq!((OAUTH_URI_PREFIX.parse)("/auth/"), Ok("/auth".to_owned()));
        // `/` would leave every path unchecked, as oauth2-proxy's own.
        for whole in ["/", "//", ""] {
            assert!((OAUTH_URI_PREFIX.parse)(whole).is_err(), "{whole:?}");
        }
        // Header names are kept lowercase, as HAProxy compares them.
        assert_eq!(
            OAUTH_HEADERS.default_value().as_str(),
            "x-auth-request-email"
        );
        assert!((OAUTH_HEADERS.parse)("X-Auth-Request-Email:auth_response_email").is_err());
    }

    #[test]
    fn external_keys_default_as_haproxy_ingress() {
        assert_eq!(AUTH_URL.default_value(), None);
        assert_eq!(AUTH_METHOD.default_value().as_str(), "GET");
        assert_eq!(AUTH_SIGNIN.default_value(), None);
        for key in [
            &AUTH_HEADERS_REQUEST,
            &AUTH_HEADERS_SUCCEED,
            &AUTH_HEADERS_FAIL,
        ] {
            assert_eq!(key.default_value().as_str(), "*");
        }
        assert_eq!(AUTH_TIMEOUT.default_value().as_str(), "2s");
    }

    #[test]
    fn auth_urls_are_checked() {
        assert_eq!(
            (AUTH_URL.parse)("http://Auth.Local:4180/oauth2/auth"),
            Ok(Some(AuthUrl::Http(
                QuotedWord::new("http://auth.local:4180/oauth2/auth")
                    .unwrap_or_else(|e| panic!("{e}"))
            )))
        );
        assert_eq!(
            (AUTH_URL.parse)("https://10.0.0.2"),
            Ok(Some(AuthUrl::Http(
                QuotedWord::new("https://10.0.0.2/").unwrap_or_else(|e| panic!("{e}"))
            )))
        );
        assert_eq!(
            (AUTH_URL.parse)("svc://oauth2-proxy:4180/oauth2/auth"),
            Ok(Some(AuthUrl::Service {
                namespace: None,
                name: "oauth2-proxy".to_owned(),
                port: 4180,
                path: "/oauth2/auth".to_owned(),
            }))
        );
        assert_eq!(
            (AUTH_URL.parse)("svc://oauth2-proxy/auth"),
            Err(
                "'svc://oauth2-proxy/auth' names no Service port (svc://service:port/path)"
                    .to_owned()
            )
        );
        assert_eq!(
            (AUTH_URL.parse)("ftp://x/"),
            Err("'ftp://x/' is not an http://, https:// or svc:// URL".to_owned())
        );
        assert!((AUTH_URL.parse)("http://a b/").is_err());
        assert!((AUTH_URL.parse)("http://x/a'b").is_err());
        assert!((AUTH_URL.parse)("http://x:99999/").is_err());
        assert!((AUTH_URL.parse)("http://[::1]:8080/auth").is_ok());
    }

    #[test]
    fn methods_and_header_lists_are_checked() {
        assert_eq!(
            (AUTH_METHOD.parse)("head").map(|m| m.as_str().to_owned()),
            Ok("HEAD".to_owned())
        );
        assert_eq!(
            (AUTH_METHOD.parse)("PATCH"),
            Err("'PATCH' is not GET, HEAD, POST, PUT, DELETE or *".to_owned())
        );
        assert_eq!(
            (AUTH_HEADERS_SUCCEED.parse)("X-Auth-Request-User, X-Auth-Request-Email")
                .map(|h| h.as_str().to_owned()),
            Ok("x-auth-request-user,x-auth-request-email".to_owned())
        );
        assert_eq!(
            (AUTH_HEADERS_FAIL.parse)("").map(|h| h.as_str().to_owned()),
            Ok("-".to_owned())
        );
        assert!((AUTH_HEADERS_REQUEST.parse)("X-(.*)").is_err());
        assert!((AUTH_TIMEOUT.parse)("1ms").is_err());
        assert!((AUTH_TIMEOUT.parse)("500ms").is_ok());
    }

    #[test]
    fn sign_in_urls_insert_only_request_samples() {
        assert_eq!(
            (AUTH_SIGNIN.parse)(
                "https://auth.example.com/oauth2/start?rd=%[hdr(host)]%[path,url_enc]&x=%2F"
            )
            .map(|s| s.map(|s| s.as_str().to_owned())),
            Ok(Some(
                "https://auth.example.com/oauth2/start?rd=%[hdr(host)]%[path,url_enc]&x=%%2F"
                    .to_owned()
            ))
        );
        assert!((AUTH_SIGNIN.parse)("https://x/?e=%[env(SECRET)]").is_err());
        assert!((AUTH_SIGNIN.parse)("https://x/?e=%[var(txn.x)]").is_err());
        assert!((AUTH_SIGNIN.parse)("https://x/?e=%[path").is_err());
        assert!((AUTH_SIGNIN.parse)("https://x/ y").is_err());
        assert!((AUTH_SIGNIN.parse)("%[ssl_fc,iif(https,http)]://x/").is_ok());
    }
}
