//! Keys of a path's routing: the HTTPS redirect.

use super::parse::parse_bool;
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
