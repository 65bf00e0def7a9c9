//! Keys of TLS passthrough: a host's TLS connections sent untouched to its backend.

use super::parse::{parse_bool, parse_optional_port};
use super::{Applied, Key, Scope};

/// `ssl-passthrough`.
pub static SSL_PASSTHROUGH: Key<bool> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "ssl-passthrough",
    scope: Scope::Host,
    default: "false",
    accepted_values: "`true` or `false` (also `True`, `TRUE`, `t`, `T`, `1` and `False`, `FALSE`, `f`, `F`, `0`, as haproxy-ingress reads them)",
    parse: parse_bool,
    doc: "TLS connections to the Ingress's hosts are sent untouched, chosen by their SNI, to the backend of the path `/`, which terminates TLS itself (its own certificate is the one clients see); HAProxy never decrypts them. The other hosts on the HTTPS port are terminated and routed as before. Only the path `/` is served (other paths are reported and left out), and a host without a name cannot pass through (no SNI to match). Plain-HTTP requests to such a host are redirected to HTTPS (`ssl-redirect-code`), or sent to `ssl-passthrough-http-port`. The allow and deny lists that apply to the path `/` apply to the host's TLS connections by their source address (`allowlist-source-header` cannot be read there); an authentication key cannot be applied to a connection HAProxy does not decrypt, so the host's TLS connections are then refused, and reported, rather than served without it. Its `ssl-passthrough-http-port` route applies them all as any path does. Adding or removing a host whose backend HAProxy already has is live; the first passthrough host, and the last one's removal, reload HAProxy (the HTTPS port then reads SNI first, or no longer does).",
    applied: Applied::Live,
    differs: "haproxy-ingress ignores authentication keys on a passthrough host; portcullis refuses its TLS connections while one is set.",
};
/// `ssl-passthrough-http-port`.
pub static SSL_PASSTHROUGH_HTTP_PORT: Key<Option<u16>> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "ssl-passthrough-http-port",
    scope: Scope::Host,
    default: "",
    accepted_values: "a Service port number from 1 to 65535, such as `8080`; or empty",
    parse: parse_optional_port,
    doc: "With `ssl-passthrough`, plain-HTTP requests to the Ingress's hosts go to this port of the path `/`'s Service, which speaks plain HTTP, instead of being redirected to HTTPS.",
    applied: Applied::Reload,
    differs: "",
};
