//! Keys of the forwarded headers: X-Forwarded-For, the original client's, the real IP.

use model::{Cidr, ForwardFor, HeaderName};

use super::parse::{parse_cidr_list, parse_forward_for, parse_optional_header};
use super::{Key, Scope};

/// `forwardfor`.
pub const FORWARDFOR: Key<ForwardFor> = Key {
    name: "forwardfor",
    scope: Scope::Global,
    default: "add",
    parse: parse_forward_for,
    doc: "X-Forwarded-For: add (replace the client's with its address), update (append), ifmissing, ignore.",
};
/// `original-forwarded-for-hdr`.
pub const ORIGINAL_FORWARDED_FOR_HDR: Key<Option<HeaderName>> = Key {
    name: "original-forwarded-for-hdr",
    scope: Scope::Global,
    default: "X-Original-Forwarded-For",
    parse: parse_optional_header,
    doc: "Where forwardfor add keeps the client's X-Forwarded-For; empty drops it.",
};
/// `real-ip-hdr`.
pub const REAL_IP_HDR: Key<Option<HeaderName>> = Key {
    name: "real-ip-hdr",
    scope: Scope::Global,
    default: "X-Real-IP",
    parse: parse_optional_header,
    doc: "Header set to the client address; empty sets none.",
};
/// `forwardfor-trusted-cidrs`.
pub const FORWARDFOR_TRUSTED_CIDRS: Key<Vec<Cidr>> = Key {
    name: "forwardfor-trusted-cidrs",
    scope: Scope::Global,
    default: "",
    parse: parse_cidr_list,
    doc: "Comma-separated address blocks of trusted proxies, whose forwarded headers are kept.",
};
