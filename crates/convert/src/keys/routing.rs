//! Keys of a path's routing: the HTTPS redirect.

use super::parse::{parse_bool, parse_redirect_code};
use super::{Key, Scope};

/// `ssl-redirect`.
pub const SSL_REDIRECT: Key<bool> = Key {
    name: "ssl-redirect",
    scope: Scope::Path,
    default: "true",
    accepted_values: "`true` or `false`",
    parse: parse_bool,
    doc: "Redirect plain-HTTP requests to HTTPS when the host has TLS.",
};
/// `ssl-redirect-code`.
pub const SSL_REDIRECT_CODE: Key<u16> = Key {
    name: "ssl-redirect-code",
    scope: Scope::Path,
    default: "308",
    accepted_values: "`301`, `302`, `303`, `307` or `308`",
    parse: parse_redirect_code,
    doc: "The status code of the redirect to HTTPS (see `ssl-redirect`).",
};
