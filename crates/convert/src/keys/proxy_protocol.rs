//! Keys of the PROXY protocol: accepted by the frontends, sent to a backend's servers.

use model::{Cidr, SendProxy};

use super::parse::{parse_bool, parse_cidr_list};
use super::{Applied, Key, Scope};

/// `use-proxy-protocol`.
pub static USE_PROXY_PROTOCOL: Key<bool> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "use-proxy-protocol",
    scope: Scope::Global,
    default: "false",
    accepted_values: "`true` or `false` (also `True`, `TRUE`, `t`, `T`, `1` and `False`, `FALSE`, `f`, `F`, `0`, as haproxy-ingress reads them)",
    parse: parse_bool,
    doc: "`true` when the frontends are behind a proxy or load balancer that sends the PROXY protocol (version 1 or 2): the client address it carries is the one HAProxy sees, logs and forwards (X-Forwarded-For, `real-ip-hdr`). Every client must then send it, unless `use-proxy-protocol-trusted-cidrs` names the ones that do. `forwardfor-trusted-cidrs` is then matched against the address it carries.",
    applied: Applied::Reload,
    differs: "Global: portcullis has one set of HTTP frontends, where haproxy-ingress (since v0.17) also lets an Ingress choose a custom frontend.",
};
/// `use-proxy-protocol-trusted-cidrs`.
pub static USE_PROXY_PROTOCOL_TRUSTED_CIDRS: Key<Vec<Cidr>> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "use-proxy-protocol-trusted-cidrs",
    scope: Scope::Global,
    default: "",
    accepted_values: "up to 32 IPv4 or IPv6 addresses or address blocks, separated by commas, such as `10.0.0.0/8, 192.168.1.7`, or empty",
    parse: parse_cidr_list,
    doc: "Under `use-proxy-protocol`, the sources that send the PROXY protocol; they must send it. Any other client is served as a direct one, with its own address, and cannot claim another. Empty: every client must send it.",
    applied: Applied::Reload,
    differs: "haproxy-ingress has no such key: there every client may claim any address.",
};
/// `proxy-protocol`.
pub static PROXY_PROTOCOL: Key<Option<SendProxy>> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "proxy-protocol",
    scope: Scope::Backend,
    default: "no",
    accepted_values: "`v1`, `v2`, `v2-ssl`, `v2-ssl-cn`, or `no` (or empty) for none",
    parse: parse_send_proxy,
    doc: "The PROXY protocol header HAProxy sends to the backend's servers, which must expect it: `v1` (text), `v2` (binary), `v2-ssl` (with the client's TLS details), `v2-ssl-cn` (and its certificate's CN). Health checks send it too. Servers added without a reload send it like the others.",
    applied: Applied::Reload,
    differs: "",
};

fn parse_send_proxy(text: &str) -> Result<Option<SendProxy>, String> {
    match text.trim() {
        "" | "no" => Ok(None),
        "v1" => Ok(Some(SendProxy::V1)),
        "v2" => Ok(Some(SendProxy::V2)),
        "v2-ssl" => Ok(Some(SendProxy::V2Ssl)),
        "v2-ssl-cn" => Ok(Some(SendProxy::V2SslCn)),
        other => Err(format!(
            "'{}' is not v1, v2, v2-ssl, v2-ssl-cn or no",
            other.escape_debug()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proxy_protocol_versions_parse_and_default_to_none() {
        assert_eq!(PROXY_PROTOCOL.default_value(), None);
        assert_eq!(
            (PROXY_PROTOCOL.parse)("v2-ssl-cn"),
            Ok(Some(SendProxy::V2SslCn))
        );
        assert_eq!((PROXY_PROTOCOL.parse)("v1"), Ok(Some(SendProxy::V1)));
        assert_eq!(
            (PROXY_PROTOCOL.parse)("v3"),
            Err("'v3' is not v1, v2, v2-ssl, v2-ssl-cn or no".into())
        );
    }

    #[test]
    fn accepting_the_proxy_protocol_is_off_and_open_by_default() {
        assert!(!USE_PROXY_PROTOCOL.default_value());
        assert_eq!((USE_PROXY_PROTOCOL.parse)("1"), Ok(true));
        assert!((USE_PROXY_PROTOCOL.parse)("on").is_err());
        assert!(USE_PROXY_PROTOCOL_TRUSTED_CIDRS.default_value().is_empty());
        assert_eq!(
            (USE_PROXY_PROTOCOL_TRUSTED_CIDRS.parse)("10.0.0.0/8, 192.168.1.7")
                .map(|list| list.len()),
            Ok(2)
        );
        assert!((USE_PROXY_PROTOCOL_TRUSTED_CIDRS.parse)("10.0.0.0/33").is_err());
        let many = vec!["10.0.0.1"; 33].join(",");
        assert_eq!(
            (USE_PROXY_PROTOCOL_TRUSTED_CIDRS.parse)(&many),
            Err("33 addresses; at most 32 are accepted".into())
        );
    }
}
