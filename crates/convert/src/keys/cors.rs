//! Keys of cross-origin resource sharing: the origins a path shares its responses with,
//! and what preflights are told.

use super::parse::{parse_bool, parse_max_age};
use super::{Applied, Key, Scope};

/// At most this many origins, regexes, methods or headers in one list.
const MAX_CORS_ENTRIES: usize = 64;

/// `cors-enable`.
pub static CORS_ENABLE: Key<bool> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "cors-enable",
    scope: Scope::Path,
    default: "false",
    accepted_values: "`true` or `false` (also `True`, `TRUE`, `t`, `T`, `1` and `False`, `FALSE`, `f`, `F`, `0`, as haproxy-ingress reads them)",
    parse: parse_bool,
    doc: "Cross-origin resource sharing on the path: HAProxy answers a preflight (`OPTIONS` with `Origin` and `Access-Control-Request-Method`) itself with 204 and the `Access-Control-Allow-*` headers, and adds `Access-Control-Allow-Origin` (and the credentials and expose headers) to the responses of an allowed origin, those HAProxy answers itself included (a 401 of authentication, a 413, a 429 of a rate limit), as haproxy-ingress does. A request from an origin that is not allowed gets no CORS header; its preflight is answered 204 without them, so the browser refuses the cross-origin call and the backend never sees it.",
    applied: Applied::Reload,
    differs: "",
};
/// `cors-allow-origin`.
pub static CORS_ALLOW_ORIGIN: Key<Option<Vec<String>>> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "cors-allow-origin",
    scope: Scope::Path,
    default: "*",
    accepted_values: "`*` (any origin), or origins `scheme://host[:port]` separated by commas, such as `https://app.example,https://admin.example`",
    parse: parse_origins,
    doc: "The origins allowed. With `*` and `cors-allow-credentials: false` the answer is `Access-Control-Allow-Origin: *`; otherwise the request's own Origin is echoed when it is allowed, with `Vary: Origin`.",
    applied: Applied::Reload,
    differs: "With `*` and credentials allowed, haproxy-ingress sends `*`, which browsers refuse for credentialed requests; portcullis echoes the origin instead.",
};
/// `cors-allow-origin-regex`.
pub static CORS_ALLOW_ORIGIN_REGEX: Key<Vec<String>> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "cors-allow-origin-regex",
    scope: Scope::Path,
    default: "",
    accepted_values: "PCRE2 regular expressions separated by spaces, such as `^https://[a-z0-9-]+[.]example[.]com$`; empty for none",
    parse: parse_origin_regexes,
    doc: "Origins allowed when one of these regular expressions matches the request's Origin (besides the origins of `cors-allow-origin` other than `*`). Anchor them (`^...$`): an unanchored expression matches anywhere in the Origin.",
    applied: Applied::Reload,
    differs: "",
};
/// `cors-allow-methods`.
pub static CORS_ALLOW_METHODS: Key<Vec<String>> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "cors-allow-methods",
    scope: Scope::Path,
    default: "GET, PUT, POST, DELETE, PATCH, OPTIONS",
    accepted_values: "method names separated by commas, such as `GET, POST`, or `*`",
    parse: parse_token_list,
    doc: "The preflight's `Access-Control-Allow-Methods`.",
    applied: Applied::Reload,
    differs: "",
};
/// `cors-allow-headers`.
pub static CORS_ALLOW_HEADERS: Key<Vec<String>> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "cors-allow-headers",
    scope: Scope::Path,
    default: "DNT,X-CustomHeader,Keep-Alive,User-Agent,X-Requested-With,If-Modified-Since,Cache-Control,Content-Type,Authorization",
    accepted_values: "header names separated by commas, such as `Content-Type,Authorization`, or `*`",
    parse: parse_token_list,
    doc: "The preflight's `Access-Control-Allow-Headers`.",
    applied: Applied::Reload,
    differs: "",
};
/// `cors-allow-credentials`.
pub static CORS_ALLOW_CREDENTIALS: Key<bool> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "cors-allow-credentials",
    scope: Scope::Path,
    default: "true",
    accepted_values: "`true` or `false` (also `True`, `TRUE`, `t`, `T`, `1` and `False`, `FALSE`, `f`, `F`, `0`, as haproxy-ingress reads them)",
    parse: parse_bool,
    doc: "Send `Access-Control-Allow-Credentials: true`, so browsers send cookies and authorization headers cross-origin.",
    applied: Applied::Reload,
    differs: "",
};
/// `cors-expose-headers`.
pub static CORS_EXPOSE_HEADERS: Key<Vec<String>> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "cors-expose-headers",
    scope: Scope::Path,
    default: "",
    accepted_values: "header names separated by commas, such as `X-Total,X-Page`; empty for none",
    parse: parse_token_list,
    doc: "The responses' `Access-Control-Expose-Headers`: headers a cross-origin script may read.",
    applied: Applied::Reload,
    differs: "",
};
/// `cors-max-age`.
pub static CORS_MAX_AGE: Key<u32> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "cors-max-age",
    scope: Scope::Path,
    default: "86400",
    accepted_values: "a whole number of seconds from `0` to `2147483647`",
    parse: parse_max_age,
    doc: "The preflight's `Access-Control-Max-Age`: how long a browser keeps its answer.",
    applied: Applied::Reload,
    differs: "",
};

fn split_list(text: &str, what: &str) -> Result<Vec<String>, String> {
    let entries: Vec<String> = text
        .split(',')
        .map(str::trim)
        .filter(|entry| !entry.is_empty())
        .map(str::to_owned)
        .collect();
    if entries.len() > MAX_CORS_ENTRIES {
        return Err(format!(
            "{} {what}; at most {MAX_CORS_ENTRIES} are accepted",
            entries.len()
        ));
    }
    Ok(entries)
}

fn parse_origins(text: &str) -> Result<Option<Vec<String>>, String> {
    let entries = split_list(text, "origins")?;
    if entries.is_empty() {
        return Err("the list of origins is empty (use * for any origin)".to_owned());
    }
    if entries.iter().any(|entry| entry == "*") {
        return if entries.len() == 1 {
            Ok(None)
        } else {
            Err("'*' allows any origin and cannot be listed with others".to_owned())
        };
    }
    entries
        .iter()
        .map(|origin| model::parse_origin(origin))
        .collect::<Result<_, _>>()
        .map(Some)
}

fn parse_origin_regexes(text: &str) -> Result<Vec<String>, String> {
    let patterns: Vec<&str> = text.split_whitespace().collect();
    if patterns.len() > MAX_CORS_ENTRIES {
        return Err(format!(
            "{} regular expressions; at most {MAX_CORS_ENTRIES} are accepted",
            patterns.len()
        ));
    }
    patterns
        .into_iter()
        .map(|pattern| crate::names::parse_regex(pattern, false))
        .collect()
}

fn parse_token_list(text: &str) -> Result<Vec<String>, String> {
    split_list(text, "names")?
        .iter()
        .map(|name| {
            if name == "*" {
                Ok(name.clone())
            } else {
                crate::gateway::rules::token(name)
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cors_defaults_are_haproxy_ingress_s() {
        assert!(!CORS_ENABLE.default_value());
        assert_eq!(CORS_ALLOW_ORIGIN.default_value(), None);
        assert_eq!(
            CORS_ALLOW_METHODS.default_value(),
            ["GET", "PUT", "POST", "DELETE", "PATCH", "OPTIONS"]
        );
        assert_eq!(CORS_ALLOW_HEADERS.default_value().len(), 9);
        assert!(CORS_ALLOW_CREDENTIALS.default_value());
        assert!(CORS_EXPOSE_HEADERS.default_value().is_empty());
        assert!(CORS_ALLOW_ORIGIN_REGEX.default_value().is_empty());
        assert_eq!(CORS_MAX_AGE.default_value(), 86400);
    }

    #[test]
    fn origin_lists_are_checked() {
        assert_eq!(
            parse_origins("https://a.example, http://b.example:8080"),
            Ok(Some(vec![
                "https://a.example".to_owned(),
                "http://b.example:8080".to_owned()
            ]))
        );
        assert_eq!(
            parse_origins("*,https://a.example"),
            Err("'*' allows any origin and cannot be listed with others".to_owned())
        );
        assert_eq!(
            parse_origins("https://a.example/path"),
            Err("'https://a.example/path' is not an origin such as https://app.example or https://app.example:8443".to_owned())
        );
        assert_eq!(
            parse_origins(" "),
            Err("the list of origins is empty (use * for any origin)".to_owned())
        );
    }

    #[test]
    fn regexes_compile_and_names_are_tokens() {
        assert_eq!(
            parse_origin_regexes("^https://a[.]example$ ^http://b"),
            Ok(vec![
                "^https://a[.]example$".to_owned(),
                "^http://b".to_owned()
            ])
        );
        assert!(
            parse_origin_regexes("^https://(")
                .unwrap_err()
                .contains("is not a valid PCRE2 regular expression")
        );
        assert_eq!(parse_token_list("*"), Ok(vec!["*".to_owned()]));
        assert_eq!(
            parse_token_list("X-A, X\"B"),
            Err("'X\\\"B' is not a name of letters, digits, '-', '_', '.', '~'".to_owned())
        );
    }
}
