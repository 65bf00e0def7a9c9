//! Validation of host names and paths, so no value can break a map or config line.

use model::{HostKey, PathKind, PathMatch};

/// Parses an Ingress or route host: a lowercase DNS name, or `*.` followed by one; not
/// an IP address, as the API server refuses it for an Ingress and the Gateway API for a
/// route (a client asking for an address names no host).
pub fn parse_host(host: &str) -> Result<HostKey, String> {
    if host.parse::<std::net::Ipv4Addr>().is_ok() {
        return Err(format!(
            "'{}' is an IP address, not a host name",
            host.escape_debug()
        ));
    }
    parse_any_host(host)
}

/// As [`parse_host`], an IPv4 address accepted: what a redirect or an alias names (a
/// client may reach the proxy by its address).
pub fn parse_any_host(host: &str) -> Result<HostKey, String> {
    let (wildcard, name) = match host.strip_prefix("*.") {
        Some(rest) => (true, rest),
        None => (false, host),
    };
    // One rule for DNS names, the model's, whatever they name.
    if !model::DnsName::is_valid(name) {
        return Err(format!(
            "'{}' is not a valid host name",
            host.escape_debug()
        ));
    }
    let name: std::sync::Arc<str> = if name.bytes().any(|b| b.is_ascii_uppercase()) {
        name.to_ascii_lowercase().into()
    } else {
        name.into()
    };
    Ok(if wildcard {
        HostKey::Wildcard(name)
    } else {
        HostKey::Exact(name)
    })
}

/// The field of an item in a list inside an item of another list,
/// `{outer}[{i}].{inner}[{j}]`, written without the formatting machinery: one is made for
/// each path and TLS host of every Ingress.
pub(crate) fn indexed_field(outer: &str, i: usize, inner: &str, j: usize) -> String {
    let mut field = String::with_capacity(outer.len() + inner.len() + 8);
    field.push_str(outer);
    push_index(&mut field, i);
    field.push('.');
    field.push_str(inner);
    push_index(&mut field, j);
    field
}

fn push_index(field: &mut String, index: usize) {
    field.push('[');
    match u8::try_from(index) {
        Ok(digit @ 0..=9) => field.push(char::from(b'0' + digit)),
        _ => field.push_str(&index.to_string()),
    }
    field.push(']');
}

/// The longest path accepted, in bytes: the Gateway API's own limit for path values.
/// Kubernetes sets none for Ingress paths; this one keeps every map line (host, `#`,
/// path, backend name) far below the 16 KiB at which HAProxy splits a map line in two
/// (the tail would become an entry of its own), and every configuration line that
/// quotes a path below HAProxy's line limit.
pub const MAX_PATH_BYTES: usize = 1024;

/// The longest regular expression accepted, in bytes (a configuration line must hold it).
pub const MAX_PATTERN_BYTES: usize = 1024;

/// Whether a byte may appear in a path as written in a map: RFC 3986's path characters
/// (unreserved, sub-delimiters, `:`, `@`, `/`, and `%` of percent-encoding). Anything
/// else must be percent-encoded in a request line anyway, so no request could match it.
fn path_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric()
        || matches!(
            b,
            b'-' | b'.'
                | b'_'
                | b'~'
                | b'!'
                | b'$'
                | b'&'
                | b'\''
                | b'('
                | b')'
                | b'*'
                | b'+'
                | b','
                | b';'
                | b'='
                | b':'
                | b'@'
                | b'/'
                | b'%'
        )
}

/// Checks a regular expression with PCRE2, the engine (and the JIT) HAProxy compiles it
/// with, so a pattern accepted here is one HAProxy accepts. `caseless` is HAProxy's `-i`.
pub fn parse_regex(pattern: &str, caseless: bool) -> Result<String, String> {
    if pattern.is_empty() {
        return Err("the regular expression is empty".to_owned());
    }
    if pattern.len() > MAX_PATTERN_BYTES {
        return Err(format!(
            "the regular expression is {} bytes long; at most {MAX_PATTERN_BYTES} are accepted",
            pattern.len()
        ));
    }
    if let Some(bad) = pattern.chars().find(|c| c.is_control() || *c == '\'') {
        return Err(format!(
            "the regular expression contains {bad:?}, which cannot be written in HAProxy's configuration"
        ));
    }
    // HAProxy reads a condition's words unquoted: a pattern that is a lone brace would
    // close (or open) the condition's block. The escaped brace matches the same text.
    let pattern = match pattern {
        "}" => "\\}",
        "{" => "\\{",
        other => other,
    };
    pcre2::bytes::RegexBuilder::new()
        .caseless(caseless)
        .jit_if_available(true)
        .build(&without_auto_capture(pattern))
        .map(|_| pattern.to_owned())
        .map_err(|e| {
            // The offset PCRE2 names is in the pattern with `(?n)` inserted.
            let mut why = e.to_string();
            if let Some(offset) = e.offset()
                && offset >= verbs_length(pattern) + AUTO_CAPTURE_OFF.len()
            {
                why = why.replacen(
                    &format!("at offset {offset}:"),
                    &format!("at offset {}:", offset - AUTO_CAPTURE_OFF.len()),
                    1,
                );
            }
            format!(
                "'{}' is not a valid PCRE2 regular expression: {why}",
                pattern.escape_debug()
            )
        })
}

/// PCRE2's inline `NO_AUTO_CAPTURE`.
const AUTO_CAPTURE_OFF: &str = "(?n)";

/// The length of the verbs a pattern starts with (`(*UTF)`, `(*UCP)`, ...), which must
/// stay first.
fn verbs_length(pattern: &str) -> usize {
    let mut verbs = 0;
    while pattern[verbs..].starts_with("(*") {
        match pattern[verbs..].find(')') {
            Some(end) => verbs += end + 1,
            None => break,
        }
    }
    verbs
}

/// The pattern as HAProxy compiles it for an ACL or a map: with PCRE2's
/// `NO_AUTO_CAPTURE` (`regex_comp` without captures), so that its plain groups capture
/// nothing and a numbered reference to one (`\1`, `\g1`, `(?1)`) is refused, as HAProxy
/// refuses it. The inline `(?n)` sets that option; it follows the verbs a pattern may
/// only start with (`(*UTF)`, `(*UCP)`, ...).
fn without_auto_capture(pattern: &str) -> String {
    let (verbs, rest) = pattern.split_at(verbs_length(pattern));
    format!("{verbs}{AUTO_CAPTURE_OFF}{rest}")
}

/// Parses a host pattern (`server-alias-regex`, `redirect-from-regex`): a PCRE2 regex
/// matched against the lowercase Host header without its port. It becomes a map key, so
/// it may hold no whitespace and may not start with `#`.
pub fn parse_host_regex(pattern: &str) -> Result<HostKey, String> {
    if pattern.starts_with('#') || pattern.chars().any(char::is_whitespace) {
        return Err(format!(
            "the regular expression '{}' starts with '#' or contains whitespace, which no host name matches",
            pattern.escape_debug()
        ));
    }
    parse_regex(pattern, false).map(|pattern| HostKey::Regex(pattern.into()))
}

/// Parses an Ingress path and its type. `Prefix` paths lose their trailing slashes;
/// `ImplementationSpecific` means "begins with".
pub fn parse_path(path: Option<&str>, path_type: &str) -> Result<PathMatch, String> {
    let kind = match path_type {
        "Exact" => PathKind::Exact,
        "Prefix" => PathKind::Prefix,
        "ImplementationSpecific" => PathKind::Begin,
        other => {
            return Err(format!(
                "pathType '{}' is not Exact, Prefix or ImplementationSpecific",
                other.escape_debug()
            ));
        }
    };
    path_match(path, kind)
}

/// Checks a path (absent or empty is `/`) and normalizes it for its kind: a `Prefix`
/// path loses its trailing slashes.
pub(crate) fn path_match(path: Option<&str>, kind: PathKind) -> Result<PathMatch, String> {
    let path = path.filter(|p| !p.is_empty()).unwrap_or("/");
    if !path.starts_with('/') {
        return Err(format!(
            "path '{}' must start with '/'",
            path.escape_debug()
        ));
    }
    if path.len() > MAX_PATH_BYTES {
        return Err(format!(
            "path is {} bytes long; at most {MAX_PATH_BYTES} are accepted",
            path.len()
        ));
    }
    if let Some(bad) = path.chars().find(|c| !c.is_ascii() || !path_byte(*c as u8)) {
        return Err(format!(
            "path '{}' contains {:?}, which must be percent-encoded",
            path.escape_debug(),
            bad
        ));
    }
    // "Begins with /" takes every request, as `Prefix /` does, and is the same map entry:
    // one key, so that the oldest Ingress wins it and the other is reported.
    let kind = if kind == PathKind::Begin && path == "/" {
        PathKind::Prefix
    } else {
        kind
    };
    let path = if kind == PathKind::Prefix {
        path.trim_end_matches('/')
    } else {
        path
    };
    Ok(PathMatch {
        path: path.into(),
        kind,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indexed_fields_read_as_formatted_ones() {
        for (i, j) in [(0, 0), (3, 9), (10, 255), (256, 1234)] {
            assert_eq!(
                indexed_field("spec.rules", i, "http.paths", j),
                format!("spec.rules[{i}].http.paths[{j}]")
            );
        }
    }

    #[test]
    fn hosts() {
        assert_eq!(
            parse_host("Foo.Example.COM"),
            Ok(HostKey::Exact("foo.example.com".into()))
        );
        assert_eq!(
            parse_host("*.foo.com"),
            Ok(HostKey::Wildcard("foo.com".into()))
        );
        for bad in [
            "",
            "*",
            "*.",
            "a..b",
            "-a.com",
            "a_b.com",
            "a.com\nx",
            "foo.*.com",
            "a b",
            "127.0.0.1",
            "10.1.2.3",
        ] {
            assert!(parse_host(bad).is_err(), "{bad:?}");
        }
        // Digits alone are a valid DNS label; only a whole address is refused, and only
        // where a host is routed (a redirect or an alias may name one).
        assert!(parse_host("1.2.3.example").is_ok());
        assert!(parse_host("*.0.0.1").is_ok());
        assert_eq!(
            parse_any_host("10.0.0.5"),
            Ok(HostKey::Exact("10.0.0.5".into()))
        );
    }

    #[test]
    fn paths() {
        let prefix = |p: &str| PathMatch {
            path: p.into(),
            kind: PathKind::Prefix,
        };
        assert_eq!(parse_path(Some("/foo/"), "Prefix"), Ok(prefix("/foo")));
        assert_eq!(parse_path(Some("/"), "Prefix"), Ok(prefix("")));
        assert_eq!(parse_path(None, "Prefix"), Ok(prefix("")));
        assert_eq!(
            parse_path(Some("/foo/"), "Exact"),
            Ok(PathMatch {
                path: "/foo/".into(),
                kind: PathKind::Exact
            })
        );
        assert!(parse_path(Some("foo"), "Exact").is_err());
        assert!(parse_path(Some("/a\nb"), "Exact").is_err());
        assert!(parse_path(Some("/a b"), "Prefix").is_err());
        assert!(parse_path(Some("/a"), "Regex").is_err());
        for bad in ["/x<<", "/a#b", "/a\"b", "/caf\u{e9}", "/a\\b", "/a{b}"] {
            assert!(parse_path(Some(bad), "Exact").is_err(), "{bad:?}");
        }
        let longest = format!("/{}", "a".repeat(MAX_PATH_BYTES - 1));
        assert!(parse_path(Some(&longest), "Prefix").is_ok());
        let hijack = format!("/{}a.example.test#/admin", "x".repeat(16_383));
        assert!(parse_path(Some(&hijack), "ImplementationSpecific").is_err());
        assert_eq!(
            parse_path(Some("/"), "ImplementationSpecific"),
            parse_path(Some("/"), "Prefix"),
            "both take every request, through one map entry"
        );
        assert_eq!(
            parse_path(Some("/a/"), "ImplementationSpecific").map(|p| p.kind),
            Ok(PathKind::Begin)
        );
        assert!(parse_path(Some("/a;b=c/%20/~x@y:z"), "Exact").is_ok());
    }

    #[test]
    fn a_lone_brace_is_escaped_so_that_it_cannot_close_a_condition() {
        assert_eq!(parse_regex("}", false), Ok("\\}".to_owned()));
        assert_eq!(parse_regex("{", false), Ok("\\{".to_owned()));
        assert_eq!(parse_regex("a}", false), Ok("a}".to_owned()));
    }

    #[test]
    fn numbered_references_are_refused_as_haproxy_compiles_without_captures() {
        for refused in [
            r"(a)\1",
            r"(a)\g1",
            r"(a)(?1)",
            r"(a)(?-1)",
            r"(a)?(?(1)b|c)",
        ] {
            assert!(parse_regex(refused, false).is_err(), "{refused}");
        }
        for accepted in [
            r"(a|b)c",
            r"(?<n>a)\k<n>",
            r"(*UCP)(a)b",
            r"^(www|m)\.x\.test$",
        ] {
            assert_eq!(parse_regex(accepted, false), Ok(accepted.to_owned()));
        }
    }

    #[test]
    fn regular_expressions_are_checked_by_pcre2() {
        assert_eq!(
            parse_regex("^/api/v[0-9]+$", false),
            Ok("^/api/v[0-9]+$".into())
        );
        for bad in [
            "(",
            "[a-",
            "a{2,1}",
            "(?<n>a)(?<n>b)",
            "",
            "a'b",
            "a\nb",
            "\\",
        ] {
            assert!(parse_regex(bad, false).is_err(), "{bad:?}");
        }
        assert!(parse_regex(&"a".repeat(MAX_PATTERN_BYTES + 1), false).is_err());
    }
}
