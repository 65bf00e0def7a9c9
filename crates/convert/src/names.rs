//! Validation of host names and paths, so no value can break a map or config line.

use model::{HostKey, PathKind, PathMatch};

/// Parses an Ingress host: a lowercase DNS name, or `*.` followed by one.
pub fn parse_host(host: &str) -> Result<HostKey, String> {
    let lower = host.to_ascii_lowercase();
    let (wildcard, name) = match lower.strip_prefix("*.") {
        Some(rest) => (true, rest),
        None => (false, lower.as_str()),
    };
    let valid_label = |label: &str| {
        !label.is_empty()
            && label.len() <= 63
            && label
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-')
            && !label.starts_with('-')
            && !label.ends_with('-')
    };
    if name.is_empty() || name.len() > 253 || !name.split('.').all(valid_label) {
        return Err(format!(
            "'{}' is not a valid host name",
            host.escape_debug()
        ));
    }
    Ok(if wildcard {
        HostKey::Wildcard(name.to_owned())
    } else {
        HostKey::Exact(name.to_owned())
    })
}

/// Parses an Ingress path and its type. `Prefix` paths lose their trailing slashes;
/// `ImplementationSpecific` means "begins with".
pub fn parse_path(path: Option<&str>, path_type: &str) -> Result<PathMatch, String> {
    let path = path.filter(|p| !p.is_empty()).unwrap_or("/");
    if !path.starts_with('/') {
        return Err(format!(
            "path '{}' must start with '/'",
            path.escape_debug()
        ));
    }
    if let Some(bad) = path.chars().find(|c| c.is_whitespace() || c.is_control()) {
        return Err(format!(
            "path '{}' contains {:?}, which is not allowed",
            path.escape_debug(),
            bad
        ));
    }
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
    let path = if kind == PathKind::Prefix {
        path.trim_end_matches('/')
    } else {
        path
    };
    Ok(PathMatch {
        path: path.to_owned(),
        kind,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
        ] {
            assert!(parse_host(bad).is_err(), "{bad:?}");
        }
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
    }
}
