//! Keys of the forwarded headers: X-Forwarded-For, the original client's, the real IP.

use model::{Cidr, ForwardFor, HeaderName};

use super::parse::{parse_cidr_list, parse_forward_for, parse_optional_header};
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
