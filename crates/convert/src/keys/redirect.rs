//! Keys of redirects: the HTTPS redirect's code and exceptions, `redirect-to`,
//! `redirect-from`, `app-root`.

use model::{HostKey, Redirect};

use super::parse::{
    parse_redirect_code, parse_redirect_exceptions, parse_redirect_url, parse_url_path,
};
use super::{Applied, Key, Scope};

/// `ssl-redirect-code`.
pub static SSL_REDIRECT_CODE: Key<u16> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "ssl-redirect-code",
    scope: Scope::Global,
    default: "302",
    accepted_values: "`301`, `302`, `303`, `307` or `308`",
    parse: parse_redirect_code,
    doc: "The status code of the redirect to HTTPS (see `ssl-redirect`).",
    applied: Applied::Live,
    differs: "",
};
/// `no-tls-redirect-locations`.
pub static NO_TLS_REDIRECT_LOCATIONS: Key<Vec<String>> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "no-tls-redirect-locations",
    scope: Scope::Global,
    default: "/.well-known/acme-challenge",
    accepted_values: "paths starting with '/' of letters, digits and '/-_.~', separated by commas, such as `/.well-known/acme-challenge, /status`, at most 32; or empty",
    parse: parse_redirect_exceptions,
    doc: "Plain-HTTP requests whose path begins with one of these are never redirected to HTTPS, so an ACME HTTP-01 challenge (cert-manager's solver) is answered over plain HTTP; they go where the HTTPS request would.",
    applied: Applied::Reload,
    differs: "",
};
/// `redirect-to`.
pub static REDIRECT_TO: Key<Option<Redirect>> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "redirect-to",
    scope: Scope::Path,
    default: "",
    accepted_values: "an http:// or https:// URL with a host name, an optional port and an optional path of letters, digits and '/-_.~', such as `https://www.example.com/login`; or empty",
    parse: parse_redirect_url,
    doc: "Requests to the path are redirected to this URL (with `redirect-to-code`) instead of reaching the backend; the request's path and query are not kept.",
    applied: Applied::Reload,
    differs: "",
};
/// `redirect-to-code`.
pub static REDIRECT_TO_CODE: Key<u16> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "redirect-to-code",
    scope: Scope::Global,
    default: "302",
    accepted_values: "`301`, `302`, `303`, `307` or `308`",
    parse: parse_redirect_code,
    doc: "The status code of `redirect-to`'s redirects.",
    applied: Applied::Reload,
    differs: "haproxy-ingress scopes it to a frontend, which an Ingress names with `http-frontend`; portcullis has one pair of frontends, so it is global.",
};
/// `default-backend-redirect`.
pub static DEFAULT_BACKEND_REDIRECT: Key<Option<Redirect>> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "default-backend-redirect",
    scope: Scope::Global,
    default: "",
    accepted_values: "an http:// or https:// URL with a host name, an optional port and an optional path of letters, digits and '/-_.~', such as `https://www.example.com/`; or empty",
    parse: parse_redirect_url,
    doc: "Requests that no route takes (no host or no path of theirs matches) and that no default backend serves are redirected to this URL (with `default-backend-redirect-code`) instead of being answered 404, `http-response-404` included; the request's path and query are not kept. A Gateway API hostname still answers 404 to what its rules do not match, as the specification asks. Empty answers 404.",
    applied: Applied::Reload,
    differs: "",
};
/// `default-backend-redirect-code`.
pub static DEFAULT_BACKEND_REDIRECT_CODE: Key<u16> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "default-backend-redirect-code",
    scope: Scope::Global,
    default: "302",
    accepted_values: "`301`, `302`, `303`, `307` or `308`",
    parse: parse_redirect_code,
    doc: "The status code of `default-backend-redirect`'s redirects.",
    applied: Applied::Reload,
    differs: "",
};
/// `redirect-from`.
pub static REDIRECT_FROM: Key<Option<HostKey>> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "redirect-from",
    scope: Scope::Host,
    default: "",
    accepted_values: "a host name, or a wildcard of one label in front of a host name, such as `app.example.com` or `*.example.com`; or empty",
    parse: parse_optional_host,
    doc: "A host redirected (with `redirect-from-code`) to the Ingress's host, keeping the scheme, the path and the query. Only an Ingress with one host, not a wildcard, may have it, set as an Ingress annotation.",
    applied: Applied::Reload,
    differs: "The source host is routed as a host of its own whose every path redirects, so a path another (older) Ingress routes on that host is served there, where haproxy-ingress leaves the whole host to any Ingress that names it.",
};
/// `redirect-from-regex`.
pub static REDIRECT_FROM_REGEX: Key<Option<HostKey>> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "redirect-from-regex",
    scope: Scope::Host,
    default: "",
    accepted_values: "a PCRE2 regular expression without whitespace, such as `^app[0-9]*[.]example[.]com$`; or empty",
    parse: super::routing::parse_optional_host_regex,
    doc: "Host names matching this regular expression are redirected (with `redirect-from-code`) to the Ingress's host, keeping the scheme, the path and the query. The pattern is used as written and matched against the lowercase Host header without its port, after every exact and wildcard host. Only an Ingress with one host, not a wildcard, may have it, set as an Ingress annotation.",
    applied: Applied::Reload,
    differs: "haproxy-ingress matches a POSIX extended regular expression, portcullis a PCRE2 one (HAProxy's engine).",
};
/// `redirect-from-code`.
pub static REDIRECT_FROM_CODE: Key<u16> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "redirect-from-code",
    scope: Scope::Global,
    default: "302",
    accepted_values: "`301`, `302`, `303`, `307` or `308`",
    parse: parse_redirect_code,
    doc: "The status code of `redirect-from`'s and `redirect-from-regex`'s redirects.",
    applied: Applied::Reload,
    differs: "haproxy-ingress scopes it to a frontend, which an Ingress names with `http-frontend`; portcullis has one pair of frontends, so it is global.",
};
/// `app-root`.
pub static APP_ROOT: Key<Option<String>> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "app-root",
    scope: Scope::Host,
    default: "",
    accepted_values: "a path starting with '/' of letters, digits and '/-_.~', such as `/app`; or empty",
    parse: parse_url_path,
    doc: "Requests for `/` on the Ingress's hosts are redirected (302) to this path. It applies to the path `/` the same Ingress routes; a host of the Ingress with no such path is reported and nothing is redirected there. (haproxy-ingress redirects `/` of the host whatever the Ingress routes; here another tenant's Ingress may own the host's `/`.)",
    applied: Applied::Reload,
    differs: "",
};

/// A host name or one-label wildcard, or nothing.
pub(super) fn parse_optional_host(text: &str) -> Result<Option<HostKey>, String> {
    let text = text.trim();
    if text.is_empty() {
        return Ok(None);
    }
    crate::names::parse_any_host(text).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redirect_codes_default_to_302_as_in_haproxy_ingress() {
        for key in [&SSL_REDIRECT_CODE, &REDIRECT_TO_CODE, &REDIRECT_FROM_CODE] {
            assert_eq!(key.default_value(), 302);
            assert_eq!((key.parse)("308"), Ok(308));
            assert_eq!(
                (key.parse)("304"),
                Err("'304' is not one of 301, 302, 303, 307, 308".into())
            );
        }
    }

    #[test]
    fn tls_redirect_exceptions_are_url_paths() {
        assert_eq!(
            NO_TLS_REDIRECT_LOCATIONS.default_value(),
            ["/.well-known/acme-challenge"]
        );
        assert_eq!(
            (NO_TLS_REDIRECT_LOCATIONS.parse)("/a, /b"),
            Ok(vec!["/a".to_owned(), "/b".to_owned()])
        );
        assert_eq!((NO_TLS_REDIRECT_LOCATIONS.parse)(""), Ok(Vec::new()));
        assert_eq!(
            (NO_TLS_REDIRECT_LOCATIONS.parse)("/a b"),
            Err("path '/a b' must start with '/' and hold only letters, digits, '/', '-', '_', '.', '~'".into())
        );
    }

    #[test]
    fn redirect_to_is_an_http_url() {
        assert_eq!(REDIRECT_TO.default_value(), None);
        let redirect = (REDIRECT_TO.parse)("https://x.test/y").unwrap_or_default();
        assert_eq!(
            redirect.map(|r| (r.scheme, r.hostname, r.path)),
            Some((
                Some("https".to_owned()),
                Some("x.test".to_owned()),
                Some(model::PathChange::Full("/y".to_owned()))
            ))
        );
        assert_eq!(
            (REDIRECT_TO.parse)("ftp://x"),
            Err("'ftp://x' does not start with http:// or https://".into())
        );
        assert_eq!(
            (REDIRECT_TO.parse)("https://x.test/a b"),
            Err("path '/a b' must start with '/' and hold only letters, digits, '/', '-', '_', '.', '~'".into())
        );
    }

    #[test]
    fn app_root_is_a_url_path() {
        assert_eq!(APP_ROOT.default_value(), None);
        assert_eq!((APP_ROOT.parse)("/app"), Ok(Some("/app".to_owned())));
        assert_eq!((APP_ROOT.parse)("app"), Err("path 'app' must start with '/' and hold only letters, digits, '/', '-', '_', '.', '~'".into()));
        assert_eq!((APP_ROOT.parse)("/a?b"), Err("path '/a?b' must start with '/' and hold only letters, digits, '/', '-', '_', '.', '~'".into()));
    }

    #[test]
    fn redirect_from_is_one_host_name_or_wildcard() {
        assert_eq!(REDIRECT_FROM.default_value(), None);
        assert_eq!(
            (REDIRECT_FROM.parse)("App.Example.com"),
            Ok(Some(HostKey::Exact("app.example.com".into())))
        );
        assert_eq!(
            (REDIRECT_FROM.parse)("*.example.com"),
            Ok(Some(HostKey::Wildcard("example.com".into())))
        );
        assert_eq!(
            (REDIRECT_FROM.parse)("a.test/x"),
            Err("'a.test/x' is not a valid host name".into())
        );
    }
}
