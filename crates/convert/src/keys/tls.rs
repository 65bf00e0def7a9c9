//! Keys of the frontends' TLS handshake: ciphers, protocol versions, ALPN.

use model::{TlsOptions, TlsWord};

use super::parse::{
    parse_alpn, parse_cipher_suites, parse_ciphers, parse_host_tls_options, parse_tls_options,
};
use super::{Applied, Key, Scope};

/// `ssl-ciphers`.
pub const SSL_CIPHERS: Key<Option<TlsWord>> = Key {
    name: "ssl-ciphers",
    scope: Scope::Host,
    default: "",
    accepted_values: "OpenSSL cipher names and keywords (HIGH, ECDHE, aNULL...) separated by ':', each optionally after '!', '-' or '+', at least one not excluded, such as `ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256` or `HIGH:!aNULL`; or empty for HAProxy's default",
    parse: parse_ciphers,
    doc: "The ciphers offered up to TLS 1.2. Set in the global ConfigMap, for every host; as an Ingress annotation, for its hosts.",
    applied: Applied::Reload,
    differs: "Without a value, HAProxy's (OpenSSL's) default list is used, where haproxy-ingress sets Mozilla's intermediate list.",
};
/// `ssl-cipher-suites`.
pub const SSL_CIPHER_SUITES: Key<Option<TlsWord>> = Key {
    name: "ssl-cipher-suites",
    scope: Scope::Host,
    default: "",
    accepted_values: "TLS 1.3 suites separated by ':', of `TLS_AES_128_GCM_SHA256`, `TLS_AES_256_GCM_SHA384`, `TLS_CHACHA20_POLY1305_SHA256`, `TLS_AES_128_CCM_SHA256`, `TLS_AES_128_CCM_8_SHA256`; or empty for HAProxy's default",
    parse: parse_cipher_suites,
    doc: "The cipher suites offered with TLS 1.3. Set in the global ConfigMap, for every host; as an Ingress annotation, for its hosts.",
    applied: Applied::Reload,
    differs: "",
};
/// `tls-alpn`.
pub const TLS_ALPN: Key<TlsWord> = Key {
    name: "tls-alpn",
    scope: Scope::Host,
    default: "h2,http/1.1",
    accepted_values: "up to 8 protocol names of letters, digits and './-', separated by commas, such as `h2,http/1.1` or `http/1.1`",
    parse: parse_alpn,
    doc: "The protocols offered by ALPN, in order of preference: `http/1.1` alone turns HTTP/2 off.",
    applied: Applied::Reload,
    differs: "",
};
/// `ssl-options`.
pub const SSL_OPTIONS: Key<TlsOptions> = Key {
    name: "ssl-options",
    scope: Scope::Global,
    default: "no-sslv3 no-tlsv10 no-tlsv11 no-tls-tickets",
    accepted_values: "options separated by spaces, of `no-sslv3`, `no-tlsv10`, `no-tlsv11`, `no-tlsv12`, `no-tlsv13`, `no-tls-tickets`, `force-tlsv12`, `force-tlsv13`, ssl-min-ver and ssl-max-ver followed by a version (TLSv1.0, TLSv1.1, TLSv1.2 or TLSv1.3, as in `ssl-min-ver TLSv1.2`), leaving some TLS version enabled",
    parse: parse_tls_options,
    doc: "The TLS options of every HTTPS frontend.",
    applied: Applied::Reload,
    differs: "",
};
/// `ssl-options-host`.
pub const SSL_OPTIONS_HOST: Key<TlsOptions> = Key {
    name: "ssl-options-host",
    scope: Scope::Host,
    default: "",
    accepted_values: "options separated by spaces, of ssl-min-ver and ssl-max-ver followed by a version (TLSv1.0, TLSv1.1, TLSv1.2 or TLSv1.3, as in `ssl-max-ver TLSv1.2`), `no-ca-names` and `allow-0rtt`; or empty",
    parse: parse_host_tls_options,
    doc: "TLS options of the Ingress's hosts, over `ssl-options`.",
    applied: Applied::Reload,
    differs: "Only the options HAProxy 2.6 takes per host (in a certificate list) are accepted; `no-tlsv11` and the like are written `ssl-min-ver` here.",
};
