//! Keys of what HAProxy answers on its own: custom error pages, the `Server` header, the
//! request body limit.

use model::{ErrorPage, ServerHeader};

use super::{Applied, Key, Scope};

/// What every `http-response-<code>` key accepts.
const ERROR_PAGE_VALUES: &str = "a response: an optional first line with the status code and reason (`404` or `302 Found`), then header lines `name: value`, then an empty line and the body; at most 15000 bytes in all. The content-length header is computed. Empty keeps HAProxy's own response";

/// What the global `http-response-<code>` keys haproxy-ingress scopes to a backend
/// differ in.
const ERROR_PAGE_DIFFERS: &str = "haproxy-ingress takes it per backend too, as an annotation; portcullis answers this code in the frontend, before a backend is chosen, so it reads it from the global ConfigMap only.";

macro_rules! error_page_key {
    ($constant:ident, $code:literal, $name:literal, $when:literal, $differs:expr) => {
        error_page_key!($constant, $code, $name, $when, $differs, Scope::Global, "");
    };
    ($constant:ident, $code:literal, $name:literal, $when:literal, $differs:expr, $scope:expr, $scope_doc:literal) => {
        #[doc = concat!("`", $name, "`.")]
        pub static $constant: Key<Option<ErrorPage>> = Key {
            parsed_default: std::sync::OnceLock::new(),
            name: $name,
            scope: $scope,
            default: "",
            accepted_values: ERROR_PAGE_VALUES,
            parse: |text| parse_error_page($code, text),
            doc: concat!(
                "The response HAProxy sends instead of its own ",
                stringify!($code),
                " (",
                $when,
                "). Responses from backends are passed as they are.",
                $scope_doc
            ),
            applied: Applied::Reload,
            differs: $differs,
        };
    };
}

error_page_key!(
    HTTP_RESPONSE_400,
    400,
    "http-response-400",
    "a request HAProxy cannot parse",
    ERROR_PAGE_DIFFERS
);
error_page_key!(
    HTTP_RESPONSE_401,
    401,
    "http-response-401",
    "a request without the credentials a path's `auth-secret` asks for",
    ERROR_PAGE_DIFFERS
);
error_page_key!(
    HTTP_RESPONSE_403,
    403,
    "http-response-403",
    "a request a rule denies",
    ERROR_PAGE_DIFFERS
);
error_page_key!(
    HTTP_RESPONSE_404,
    404,
    "http-response-404",
    "a request no route claims, when no default backend is set",
    ""
);
error_page_key!(
    HTTP_RESPONSE_408,
    408,
    "http-response-408",
    "a request not received within `timeout-http-request`",
    ERROR_PAGE_DIFFERS
);
error_page_key!(
    HTTP_RESPONSE_413,
    413,
    "http-response-413",
    "a request body larger than `proxy-body-size`",
    ERROR_PAGE_DIFFERS
);
error_page_key!(
    HTTP_RESPONSE_429,
    429,
    "http-response-429",
    "a client over a rate limit",
    ERROR_PAGE_DIFFERS
);
error_page_key!(
    HTTP_RESPONSE_495,
    495,
    "http-response-495",
    "a client certificate that fails verification, on a host with `auth-tls-secret`",
    ""
);
error_page_key!(
    HTTP_RESPONSE_496,
    496,
    "http-response-496",
    "a request without the client certificate a host with `auth-tls-secret` requires",
    ""
);
error_page_key!(
    HTTP_RESPONSE_500,
    500,
    "http-response-500",
    "an internal error",
    "",
    Scope::Backend,
    " An Ingress or Service annotation gives its backends a page of their own, used for the errors HAProxy answers once the backend is chosen."
);
error_page_key!(
    HTTP_RESPONSE_501,
    501,
    "http-response-501",
    "a request HAProxy cannot forward, such as one with a transfer encoding it does not implement",
    ERROR_PAGE_DIFFERS
);
error_page_key!(
    HTTP_RESPONSE_502,
    502,
    "http-response-502",
    "a server's invalid or missing response",
    "",
    Scope::Backend,
    " An Ingress or Service annotation gives its backends a page of their own, used for the errors HAProxy answers once the backend is chosen."
);
error_page_key!(
    HTTP_RESPONSE_503,
    503,
    "http-response-503",
    "a backend without a server that is up",
    "",
    Scope::Backend,
    " An Ingress or Service annotation gives its backends a page of their own, used for the errors HAProxy answers once the backend is chosen."
);
error_page_key!(
    HTTP_RESPONSE_504,
    504,
    "http-response-504",
    "a server that did not answer within `timeout-server`",
    "",
    Scope::Backend,
    " An Ingress or Service annotation gives its backends a page of their own, used for the errors HAProxy answers once the backend is chosen."
);

/// `server-header`.
pub static SERVER_HEADER: Key<Option<ServerHeader>> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "server-header",
    scope: Scope::Global,
    default: "portcullis",
    accepted_values: "1 to 64 letters, digits, spaces or `._-/()`, such as `portcullis`; or empty",
    parse: parse_server_header,
    doc: "The `Server` header added to every response that has none, HAProxy's own responses included; empty adds none. A backend's own `Server` header is passed as it is; one that `response-del-headers` (or a Gateway API filter) removes is not added back.",
    applied: Applied::Reload,
    differs: "portcullis's own key.",
};
/// `proxy-body-size`.
pub static PROXY_BODY_SIZE: Key<Option<u64>> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "proxy-body-size",
    scope: Scope::Path,
    default: "unlimited",
    accepted_values: "`unlimited`, or a size in bytes with an optional suffix k, m or g (powers of 1024), such as `10m`, up to `1024g`",
    parse: parse_body_size,
    doc: "The largest request body accepted; a request announcing a larger one is answered 413 (see `http-response-413`) without reaching a backend. A chunked body is measured by what arrived with its headers. An annotation sets it for the Ingress's paths (or the Service's); `unlimited` there lifts the ConfigMap's limit.",
    applied: Applied::Reload,
    differs: "",
};

fn parse_error_page(code: u16, text: &str) -> Result<Option<ErrorPage>, String> {
    if text.trim().is_empty() {
        Ok(None)
    } else {
        ErrorPage::parse(code, text).map(Some)
    }
}

fn parse_server_header(text: &str) -> Result<Option<ServerHeader>, String> {
    let text = text.trim();
    if text.is_empty() {
        Ok(None)
    } else {
        ServerHeader::parse(text).map(Some)
    }
}

/// The largest limit accepted, 1 TiB: far above any request body, far below overflow.
const MAX_BODY_SIZE: u64 = 1 << 40;

fn parse_body_size(text: &str) -> Result<Option<u64>, String> {
    let text = text.trim();
    if text == "unlimited" {
        return Ok(None);
    }
    let invalid = || {
        format!(
            "'{}' is not unlimited or a size such as 10m, 512k or 1048576",
            text.escape_debug()
        )
    };
    let (digits, multiplier) = match text.char_indices().last() {
        Some((at, 'k' | 'K')) => (&text[..at], 1u64 << 10),
        Some((at, 'm' | 'M')) => (&text[..at], 1 << 20),
        Some((at, 'g' | 'G')) => (&text[..at], 1 << 30),
        _ => (text, 1),
    };
    if digits.is_empty() || digits.len() > 15 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(invalid());
    }
    let size = digits
        .parse::<u64>()
        .map_err(|_| invalid())?
        .saturating_mul(multiplier);
    if size > MAX_BODY_SIZE {
        return Err(format!("'{text}' is larger than 1024g"));
    }
    Ok(Some(size))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_pages_are_optional_responses() {
        assert_eq!(HTTP_RESPONSE_503.default_value(), None);
        let page = (HTTP_RESPONSE_503.parse)("content-type: text/plain\n\ntry later")
            .unwrap()
            .unwrap();
        assert!(
            page.response()
                .starts_with("HTTP/1.1 503 Service Unavailable\r\n")
        );
        let teapot = (HTTP_RESPONSE_404.parse)("302 Found\nlocation: /\n")
            .unwrap()
            .unwrap();
        assert!(teapot.response().starts_with("HTTP/1.1 302 Found\r\n"));
        assert_eq!(
            (HTTP_RESPONSE_413.parse)("too big"),
            Err(
                "line 1 'too big' is not a header 'name: value' (an empty line starts the body)"
                    .to_owned()
            )
        );
    }

    #[test]
    fn server_header_defaults_to_portcullis_and_empty_turns_it_off() {
        assert_eq!(
            SERVER_HEADER.default_value().map(|s| s.to_string()),
            Some("portcullis".to_owned())
        );
        assert_eq!(parse_server_header(""), Ok(None));
        assert_eq!(
            parse_server_header("x%[src]"),
            Err("'x%[src]' is not 1 to 64 letters, digits, spaces or '._-/()'".to_owned())
        );
    }

    #[test]
    fn body_sizes_take_binary_suffixes() {
        assert_eq!(PROXY_BODY_SIZE.default_value(), None);
        assert_eq!(parse_body_size("10m"), Ok(Some(10 << 20)));
        assert_eq!(parse_body_size("512k"), Ok(Some(512 << 10)));
        assert_eq!(parse_body_size("1024g"), Ok(Some(1 << 40)));
        assert_eq!(parse_body_size("100"), Ok(Some(100)));
        assert_eq!(
            parse_body_size("1025g"),
            Err("'1025g' is larger than 1024g".to_owned())
        );
        for bad in ["", "m", "1.5m", "-1", "10 m", "10t", "1e9"] {
            assert_eq!(
                parse_body_size(bad),
                Err(format!(
                    "'{bad}' is not unlimited or a size such as 10m, 512k or 1048576"
                ))
            );
        }
    }
}
