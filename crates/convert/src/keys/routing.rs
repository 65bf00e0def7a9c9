//! Keys of a path's routing: the HTTPS redirect.

use super::parse::{parse_bool, parse_redirect_code};
use super::{Applied, Key, Scope};

/// `ssl-redirect`.
pub const SSL_REDIRECT: Key<bool> = Key {
    name: "ssl-redirect",
    scope: Scope::Path,
    default: "true",
    accepted_values: "`true` or `false`",
    parse: parse_bool,
    doc: "Redirect plain-HTTP requests to HTTPS when the host has TLS.",
    applied: Applied::Live,
    differs: "",
};
/// `ssl-redirect-code`.
pub const SSL_REDIRECT_CODE: Key<u16> = Key {
    name: "ssl-redirect-code",
    scope: Scope::Path,
    default: "308",
    accepted_values: "`301`, `302`, `303`, `307` or `308`",
    parse: parse_redirect_code,
    doc: "The status code of the redirect to HTTPS (see `ssl-redirect`).",
    applied: Applied::Live,
    differs: "haproxy-ingress redirects with `302` by default and sets the code for the whole proxy only; portcullis uses `308`, which keeps the method and body of the request, and takes it per path too.",
};
