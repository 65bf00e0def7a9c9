//! Keys of the forwarded headers: X-Forwarded-For, the original client's, the real IP.

use model::{Cidr, ForwardFor, HeaderName};

use super::parse::{
    parse_bool, parse_cidr_list, parse_forward_for, parse_optional_header, parse_optional_port,
};
use super::{Applied, Key, Scope};

/// `forwardfor`.
pub static FORWARDFOR: Key<ForwardFor> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "forwardfor",
    scope: Scope::Global,
    default: "add",
    accepted_values: "`add`, `update`, `ifmissing` or `ignore`",
    parse: parse_forward_for,
    doc: "How X-Forwarded-For reaches backends: `add` replaces the client's header with the client address (the client's is kept in `original-forwarded-for-hdr`); `update` appends the client address to it; `ifmissing` adds the client address only when the request has none; `ignore` passes what the client sent. Under `add`, a proxy in `forwardfor-trusted-cidrs` is treated as under `update`.",
    applied: Applied::Reload,
    differs: "",
};
/// `original-forwarded-for-hdr`.
pub static ORIGINAL_FORWARDED_FOR_HDR: Key<Option<HeaderName>> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "original-forwarded-for-hdr",
    scope: Scope::Global,
    default: "X-Original-Forwarded-For",
    accepted_values: "a header name of letters, digits and dashes, such as `X-Original-Forwarded-For`, or empty",
    parse: parse_optional_header,
    doc: "The header in which `forwardfor: add` keeps the client's X-Forwarded-For; empty drops it.",
    applied: Applied::Reload,
    differs: "",
};
/// `real-ip-hdr`.
pub static REAL_IP_HDR: Key<Option<HeaderName>> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "real-ip-hdr",
    scope: Scope::Global,
    default: "X-Real-IP",
    accepted_values: "a header name of letters, digits and dashes, such as `X-Real-IP`, or empty",
    parse: parse_optional_header,
    doc: "The header set to the client address, unless a proxy in `forwardfor-trusted-cidrs` sent it already; empty sets none.",
    applied: Applied::Reload,
    differs: "",
};
/// `forwardfor-trusted-cidrs`.
pub static FORWARDFOR_TRUSTED_CIDRS: Key<Vec<Cidr>> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "forwardfor-trusted-cidrs",
    scope: Scope::Global,
    default: "",
    accepted_values: "up to 32 IPv4 or IPv6 addresses or address blocks, separated by commas, such as `10.0.0.0/8, 192.168.1.7, 2001:db8::/32`, or empty",
    parse: parse_cidr_list,
    doc: "The proxies in front of HAProxy, whose forwarded headers are trusted: their X-Forwarded-Proto, X-Forwarded-Host, X-Forwarded-Port, `real-ip-hdr` and Forwarded headers are kept, and `forwardfor: add` treats their X-Forwarded-For as `update` does. Every other client's such headers are replaced, and its Forwarded header removed.",
    applied: Applied::Reload,
    differs: "",
};
/// `fronting-proxy-port`.
pub static FRONTING_PROXY_PORT: Key<Option<u16>> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "fronting-proxy-port",
    scope: Scope::Global,
    default: "",
    accepted_values: "a port from `1` to `65535`, or empty",
    parse: parse_optional_port,
    doc: "The port where a proxy in front of HAProxy that terminates TLS itself (a cloud load balancer) sends its plain-HTTP requests. A request on that port whose X-Forwarded-Proto is `https` is served as the HTTPS port serves it: no HTTPS redirect (which would loop), the hosts' HTTPS routes, HSTS, and X-Forwarded-Proto `https` to the backend; any other request is served as on the HTTP port. The port may be the HTTP port (`--http-port`): X-Forwarded-Proto is then read from the clients in `forwardfor-trusted-cidrs`, or from every client when that key is empty. A host that requires a client certificate still refuses such requests (496): HAProxy has seen no certificate. Empty opens no such port.",
    applied: Applied::Reload,
    differs: "haproxy-ingress redirects a request on a port of its own that carries no X-Forwarded-Proto `https` to HTTPS whatever its host; portcullis serves it as the HTTP port would (a host with TLS is redirected, others are served). haproxy-ingress also keeps the proxy's `X-SSL-*` client-certificate headers; portcullis removes them as every client's once a host asks for client certificates, since it cannot check them.",
};
/// `http-passthrough-port`: haproxy-ingress v0.17's name of `fronting-proxy-port`.
pub static HTTP_PASSTHROUGH_PORT: Key<Option<u16>> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "http-passthrough-port",
    scope: Scope::Global,
    default: "",
    accepted_values: "a port from `1` to `65535`, or empty",
    parse: parse_optional_port,
    doc: "Another name of `fronting-proxy-port` (haproxy-ingress's since v0.17), read when that key is not set.",
    applied: Applied::Reload,
    differs: "",
};
/// `https-to-http-port`: an older name of `fronting-proxy-port`.
pub static HTTPS_TO_HTTP_PORT: Key<Option<u16>> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "https-to-http-port",
    scope: Scope::Global,
    default: "",
    accepted_values: "a port from `1` to `65535`, or empty",
    parse: parse_optional_port,
    doc: "An older name of `fronting-proxy-port`, read when neither it nor `http-passthrough-port` is set.",
    applied: Applied::Reload,
    differs: "",
};
/// `http-passthrough`: haproxy-ingress v0.17's way to say the HTTP port is the fronting
/// proxy's.
pub static HTTP_PASSTHROUGH: Key<bool> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "http-passthrough",
    scope: Scope::Global,
    default: "false",
    accepted_values: "`true` or `false`",
    parse: parse_bool,
    doc: "`true` makes the HTTP port (`--http-port`) a fronting proxy's too, as `fronting-proxy-port` set to it does; read when no `fronting-proxy-port` (or older name of it) is set.",
    applied: Applied::Reload,
    differs: "haproxy-ingress scopes it to a frontend, which an Ingress names with `http-frontend`; portcullis has one HTTP frontend, so it is global.",
};
/// `use-forwarded-proto`.
pub static USE_FORWARDED_PROTO: Key<bool> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "use-forwarded-proto",
    scope: Scope::Global,
    default: "true",
    accepted_values: "`true` or `false`",
    parse: parse_bool,
    doc: "`true` reads X-Forwarded-Proto on `fronting-proxy-port` to tell the proxy's HTTPS requests from its plain ones; `false` serves every request on that port as an HTTPS request, whatever the header says.",
    applied: Applied::Reload,
    differs: "With `false`, haproxy-ingress passes the proxy's X-Forwarded-Proto on as it is; portcullis sends `https`, as the request is served.",
};
