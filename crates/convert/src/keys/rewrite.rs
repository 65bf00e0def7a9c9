//! Keys that change a request on its way to the backend: `rewrite-target`, `path-type`.

use super::parse::{parse_path_type, parse_url_path};
use super::{Applied, Key, Scope};

/// How an `ImplementationSpecific` path is compared (`path-type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathType {
    /// Character-wise prefix.
    Begin,
    /// Element-wise prefix, as `Prefix`.
    Prefix,
    /// The whole path, as `Exact`.
    Exact,
    /// A PCRE2 regular expression anchored at the path's start.
    Regex,
}

/// `rewrite-target`.
pub static REWRITE_TARGET: Key<Option<String>> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "rewrite-target",
    scope: Scope::Path,
    default: "",
    accepted_values: "a path starting with '/' of letters, digits and '/-_.~', such as `/` or `/api`; or empty",
    parse: parse_url_path,
    doc: "The part of the request path the Ingress path matched is replaced with this before the request reaches the backend: with the path `/abc` and `rewrite-target: /y`, `/abc` becomes `/y` and `/abc/x` becomes `/y/x`. The query is kept.",
    applied: Applied::Reload,
    differs: "A `regex` path is not rewritten (haproxy-ingress substitutes into the regular expression); the key is reported and ignored on such a path.",
};
/// `path-type`.
pub static PATH_TYPE: Key<PathType> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "path-type",
    scope: Scope::Path,
    default: "begin",
    accepted_values: "`begin`, `prefix`, `exact` or `regex`, in any case",
    parse: parse_path_type,
    doc: "How an `ImplementationSpecific` path is compared with the request path: `begin` character-wise (`/app` matches `/app1`), `prefix` and `exact` as the `Prefix` and `Exact` path types, `regex` as a PCRE2 regular expression anchored at the start of the path (`/app[0-9]+` matches `/app15/x`; add `$` to match the whole path). Other path types ignore it.",
    applied: Applied::Reload,
    differs: "`begin` is case-sensitive; haproxy-ingress compares it without case. A `regex` path is tried where no other path of its host matches, before `/`; it is compiled by PCRE2 (HAProxy's engine) rather than read as a POSIX expression.",
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rewrite_target_is_a_url_path() {
        assert_eq!(REWRITE_TARGET.default_value(), None);
        assert_eq!((REWRITE_TARGET.parse)("/"), Ok(Some("/".to_owned())));
        assert_eq!((REWRITE_TARGET.parse)("x"), Err("path 'x' must start with '/' and hold only letters, digits, '/', '-', '_', '.', '~'".into()));
    }

    #[test]
    fn path_type_defaults_to_begin() {
        assert_eq!(PATH_TYPE.default_value(), PathType::Begin);
        assert_eq!((PATH_TYPE.parse)("regex"), Ok(PathType::Regex));
        assert_eq!((PATH_TYPE.parse)("prefix"), Ok(PathType::Prefix));
        assert_eq!((PATH_TYPE.parse)("exact"), Ok(PathType::Exact));
        assert_eq!(
            (PATH_TYPE.parse)("glob"),
            Err("'glob' is not begin, prefix, exact or regex".into())
        );
    }
}
