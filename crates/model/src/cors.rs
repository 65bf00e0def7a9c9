//! Cross-origin resource sharing: which origins a path answers with CORS headers, and
//! the headers HAProxy sends on preflights and on actual responses.

/// The origins a path shares its resources with.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum CorsOrigins {
    /// Every origin (`*`).
    Any,
    /// These origins: exact ones (`https://app.example`) and regular expressions, each
    /// validated on the way in (origins: URL characters only; regexes: PCRE2 without
    /// quotes or control characters).
    Listed {
        /// Compared exactly, case-sensitive.
        exact: Vec<String>,
        /// Matched anywhere in the Origin unless anchored.
        regex: Vec<String>,
    },
}

/// A path's CORS policy.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Cors {
    /// Who may read the responses.
    pub origins: CorsOrigins,
    /// `Access-Control-Allow-Methods`: method names, validated tokens.
    pub allow_methods: Vec<String>,
    /// `Access-Control-Allow-Headers`: header names, validated tokens (`*` allowed).
    pub allow_headers: Vec<String>,
    /// `Access-Control-Allow-Credentials: true`.
    pub allow_credentials: bool,
    /// `Access-Control-Expose-Headers`: header names, validated tokens.
    pub expose_headers: Vec<String>,
    /// `Access-Control-Max-Age`, in seconds.
    pub max_age: u32,
}

impl Cors {
    /// Whether the `Access-Control-Allow-Origin` value depends on the request's Origin,
    /// so caches must keep answers apart (`Vary: Origin`): a list, or any origin echoed
    /// because credentials forbid `*`.
    pub fn varies_by_origin(&self) -> bool {
        !matches!(self.origins, CorsOrigins::Any) || self.allow_credentials
    }
}

/// Checks one origin as a browser sends it: `scheme://host[:port]`, or `null`.
pub fn parse_origin(text: &str) -> Result<String, String> {
    let valid_host = |rest: &str| {
        !rest.is_empty()
            && rest.len() <= 253 + 6
            && rest
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b':' | b'[' | b']'))
    };
    let ok = text == "null"
        || text.split_once("://").is_some_and(|(scheme, rest)| {
            !scheme.is_empty()
                && scheme
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'))
                && valid_host(rest)
        });
    if ok {
        Ok(text.to_owned())
    } else {
        Err(format!(
            "'{}' is not an origin such as https://app.example or https://app.example:8443",
            text.escape_debug()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_are_scheme_host_and_port_only() {
        assert!(parse_origin("https://app.example").is_ok());
        assert!(parse_origin("http://127.0.0.1:8080").is_ok());
        assert!(parse_origin("null").is_ok());
        for bad in [
            "app.example",
            "https://a b",
            "https://a/path",
            "https://",
            "https://x'y",
        ] {
            assert!(parse_origin(bad).is_err(), "{bad}");
        }
    }
}
