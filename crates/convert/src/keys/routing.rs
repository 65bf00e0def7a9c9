//! Keys of a host's or a path's routing: the HTTPS redirect, host aliases, header
//! matches.

use model::{HostKey, ValueMatch};

use super::parse::parse_bool;
use super::{Applied, Key, Scope};

/// `ssl-redirect`.
pub static SSL_REDIRECT: Key<bool> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "ssl-redirect",
    scope: Scope::Path,
    default: "true",
    accepted_values: "`true` or `false` (also `True`, `TRUE`, `t`, `T`, `1` and `False`, `FALSE`, `f`, `F`, `0`, as haproxy-ingress reads them)",
    parse: parse_bool,
    doc: "Redirect plain-HTTP requests to HTTPS when the host has TLS.",
    applied: Applied::Live,
    differs: "",
};

/// Keys whose invalid value leaves their paths out rather than falling back: a path
/// served without its header match would take requests the match keeps away (all of a
/// canary's path).
pub(crate) const FAIL_CLOSED: [&str; 2] = ["http-header-match", "http-header-match-regex"];

/// `http-header-match`.
pub static HTTP_HEADER_MATCH: Key<Vec<ValueMatch>> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "http-header-match",
    scope: Scope::Path,
    default: "",
    accepted_values: "one header per line, its name (letters, digits, '-', '_', '.', '~') then a colon or a space then the value, such as `X-Env: staging`; at most 16 lines; or empty",
    parse: parse_exact_header_matches,
    doc: "The path takes only requests whose headers all have these values (the name in any case, the value exactly); other requests go on to the host's other rules for the same path, then to its shorter paths, then to the default backend. Two Ingresses of one namespace may route the same host and path, the younger with this key (a canary by header): the matching requests go to the younger one's backend, the rest to the older one's. An Ingress of another namespace cannot take a path's requests this way: its path is reported and left out, as any path another Ingress routes already.",
    applied: Applied::Reload,
    differs: "haproxy-ingress tries every path with header matches of a host before the paths without; portcullis tries them on their own path, before its other rules, so a longer path without matches wins over a shorter one with them.",
};

/// `http-header-match-regex`.
pub static HTTP_HEADER_MATCH_REGEX: Key<Vec<ValueMatch>> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "http-header-match-regex",
    scope: Scope::Path,
    default: "",
    accepted_values: "one header per line, its name (letters, digits, '-', '_', '.', '~') then a colon or a space then a PCRE2 regular expression, such as `X-Env: ^(test|staging)$`; at most 16 lines; or empty",
    parse: parse_regex_header_matches,
    doc: "As `http-header-match`, each value a regular expression the header's value must match (no anchors are added: `bar` matches `foobar`). With both keys, every match of both must hold.",
    applied: Applied::Reload,
    differs: "As `http-header-match`.",
};

fn parse_exact_header_matches(text: &str) -> Result<Vec<ValueMatch>, String> {
    parse_header_matches(text, false)
}

fn parse_regex_header_matches(text: &str) -> Result<Vec<ValueMatch>, String> {
    parse_header_matches(text, true)
}

/// The most lines a header-match key holds (the Gateway API's limit on a match's headers).
const MAX_HEADER_MATCHES: usize = 16;

/// Lines of `name: value` or `name value` (the first colon, or white space, ends the
/// name); names lowercased, values checked for HAProxy's configuration.
fn parse_header_matches(text: &str, regex: bool) -> Result<Vec<ValueMatch>, String> {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .collect();
    if lines.len() > MAX_HEADER_MATCHES {
        return Err(format!(
            "{} lines; at most {MAX_HEADER_MATCHES} are accepted",
            lines.len()
        ));
    }
    let mut matches: Vec<ValueMatch> = Vec::with_capacity(lines.len());
    for (index, line) in lines.into_iter().enumerate() {
        let at = |why: String| format!("line {}: {why}", index + 1);
        let end = line
            .find(|c: char| c == ':' || c.is_whitespace())
            .ok_or_else(|| at(format!("'{}' has no value", line.escape_debug())))?;
        let (name, rest) = line.split_at(end);
        let value = rest.strip_prefix(':').unwrap_or(rest).trim_start();
        let name = crate::gateway::rules::token(name).map_err(at)?;
        let value = if regex {
            crate::names::parse_regex(value, false)
        } else if value.is_empty() {
            Err("an empty value".to_owned())
        } else {
            crate::gateway::rules::value(value)
        }
        .map_err(at)?;
        let name = name.to_ascii_lowercase();
        if matches.iter().any(|m| m.name == name) {
            return Err(at(format!("header '{name}' is matched twice")));
        }
        matches.push(ValueMatch { name, value, regex });
    }
    Ok(matches)
}

/// `normalize-paths`.
pub static NORMALIZE_PATHS: Key<bool> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "normalize-paths",
    scope: Scope::Global,
    default: "false",
    accepted_values: "`true` or `false` (also `True`, `TRUE`, `t`, `T`, `1` and `False`, `FALSE`, `f`, `F`, `0`, as haproxy-ingress reads them)",
    parse: parse_bool,
    doc: "Normalizes request paths before they are routed, as a backend that resolves them would: `.` and `..` segments are resolved (`/a/../b` is `/b`), repeated slashes merged (`//b` is `/b`) and percent-encoded unreserved characters decoded (`/%62` is `/b`). Without it, such a path is matched as written, so a rule of a path (authentication, an allow-list, a rewrite) does not apply to `//private` or `/./private` while a backend that normalizes serves `/private` for them. The backend gets the normalized path. HAProxy 2.6 counts its `normalize-uri` action as experimental: `expose-experimental-directives` is set while this is on.",
    applied: Applied::Reload,
    differs: "portcullis's own key: haproxy-ingress matches paths as written.",
};

/// `server-alias`.
pub static SERVER_ALIAS: Key<Option<HostKey>> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "server-alias",
    scope: Scope::Host,
    default: "",
    accepted_values: "a host name, or a wildcard of one label in front of a host name, such as `www.example.com` or `*.example.com`; or empty",
    parse: super::redirect::parse_optional_host,
    doc: "Another name of the Ingress's host: requests for it (Host header, and SNI when the host has TLS) are routed as the host's, with its paths, certificate, TLS options and HTTPS redirect. A wildcard covers one label. Only an Ingress with one host may have an alias, set as an Ingress annotation; a ConfigMap value would name one alias for every host, and is not used.",
    applied: Applied::Live,
    differs: "The alias is a host of its own made of the Ingress's paths, so an older Ingress that routes the same name and path keeps it (and the conflict is reported), where haproxy-ingress puts the alias in the host's ACL.",
};

/// `server-alias-regex`.
pub static SERVER_ALIAS_REGEX: Key<Option<HostKey>> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "server-alias-regex",
    scope: Scope::Host,
    default: "",
    accepted_values: "a PCRE2 regular expression without whitespace, such as `^(www|web)[.]example[.]com$`; or empty",
    parse: parse_optional_host_regex,
    doc: "Host names matching this regular expression are routed as the Ingress's host, with its paths and HTTPS redirect. The pattern is used as written, so anchor it with `^` and `$` for whole names; it is matched against the lowercase Host header without its port, after every exact and wildcard host. Over HTTPS the certificate is the one the name's SNI selects. Only an Ingress with one host may have it, set as an Ingress annotation.",
    applied: Applied::Live,
    differs: "haproxy-ingress matches a POSIX extended regular expression, portcullis a PCRE2 one (HAProxy's engine), which accepts POSIX's syntax but treats a few escapes differently. As with `server-alias`, the alias is a host of its own.",
};

/// A host pattern, or nothing.
pub(super) fn parse_optional_host_regex(text: &str) -> Result<Option<HostKey>, String> {
    let text = text.trim();
    if text.is_empty() {
        return Ok(None);
    }
    crate::names::parse_host_regex(text).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_alias_is_one_host_name_or_wildcard() {
        assert_eq!(SERVER_ALIAS.default_value(), None);
        assert_eq!(
            (SERVER_ALIAS.parse)("WWW.Example.com"),
            Ok(Some(HostKey::Exact("www.example.com".into())))
        );
        assert_eq!(
            (SERVER_ALIAS.parse)("*.example.com"),
            Ok(Some(HostKey::Wildcard("example.com".into())))
        );
        assert_eq!((SERVER_ALIAS.parse)(" "), Ok(None));
        for bad in [
            "a.test b.test",
            "a.test,b.test",
            "^a\\.test$",
            "a..test",
            "*",
        ] {
            assert_eq!(
                (SERVER_ALIAS.parse)(bad),
                Err(format!("'{}' is not a valid host name", bad.escape_debug())),
                "{bad}"
            );
        }
    }

    #[test]
    fn ssl_redirect_defaults_to_true() {
        assert!(SSL_REDIRECT.default_value());
        assert_eq!((SSL_REDIRECT.parse)("false"), Ok(false));
        assert!((SSL_REDIRECT.parse)("no").is_err());
    }

    #[test]
    fn server_alias_regex_is_a_pcre2_pattern_fit_for_a_map_key() {
        assert_eq!(SERVER_ALIAS_REGEX.default_value(), None);
        assert_eq!(
            (SERVER_ALIAS_REGEX.parse)("^(www|web)\\.example\\.com$"),
            Ok(Some(HostKey::Regex("^(www|web)\\.example\\.com$".into())))
        );
        assert_eq!((SERVER_ALIAS_REGEX.parse)(""), Ok(None));
        assert_eq!(
            (SERVER_ALIAS_REGEX.parse)("^a b$"),
            Err("the regular expression '^a b$' starts with '#' or contains whitespace, which no host name matches".into())
        );
        assert!(
            (SERVER_ALIAS_REGEX.parse)("^(a$")
                .unwrap_err()
                .starts_with("'^(a$' is not a valid PCRE2 regular expression")
        );
        assert!((SERVER_ALIAS_REGEX.parse)("a'b").is_err());
    }
}
