//! Keys of a backend's connections to its servers: HTTP version and TLS.

use model::{DnsName, Protocol};

use super::parse::parse_bool;
use super::{Applied, Key, Scope};

/// What `backend-protocol` selects: the HTTP version, and whether TLS is used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BackendProtocol {
    /// HTTP version.
    pub protocol: Protocol,
    /// TLS toward the servers.
    pub tls: bool,
}

/// `secure-sni`, as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SniSetting {
    /// `sni`: the client's SNI.
    FromClient,
    /// `host`: the request's Host header.
    FromHost,
    /// A fixed host name.
    Fixed(DnsName),
}

/// A Secret named by a key: `name`, or `namespace/name`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretName {
    /// Namespace, when given.
    pub namespace: Option<String>,
    /// Name.
    pub name: String,
}

/// `backend-protocol`.
pub static BACKEND_PROTOCOL: Key<BackendProtocol> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "backend-protocol",
    scope: Scope::Backend,
    default: "h1",
    accepted_values: "`h1` (alias `http`), `h1-ssl` (alias `https`), `h2` (alias `grpc`) or `h2-ssl` (alias `grpcs`), in any case",
    parse: parse_backend_protocol,
    doc: "The HTTP version spoken to the servers, and whether over TLS. `h2` is HTTP/2 with prior knowledge (h2c), which gRPC servers speak; `h2-ssl` negotiates HTTP/2 by ALPN. When no layer sets it, the Service port's `appProtocol` decides: `kubernetes.io/h2c` is `h2`, `https` and `kubernetes.io/wss` are `h1-ssl`. TLS without `secure-verify-ca-secret` does not check the servers' certificates.",
    applied: Applied::Reload,
    differs: "haproxy-ingress also accepts `fcgi` and `fcgi-ssl`, and ignores the Service port's `appProtocol`; portcullis does not speak FastCGI.",
};
/// `secure-backends`.
pub static SECURE_BACKENDS: Key<bool> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "secure-backends",
    scope: Scope::Backend,
    default: "false",
    accepted_values: "`true` or `false` (also `True`, `TRUE`, `t`, `T`, `1` and `False`, `FALSE`, `f`, `F`, `0`, as haproxy-ingress reads them)",
    parse: parse_bool,
    doc: "Connects to the servers over TLS, whatever `backend-protocol` says.",
    applied: Applied::Reload,
    differs: "",
};
/// Keys whose invalid value leaves the backend without servers rather than falling back
/// to a wider layer's value, which would send traffic to servers nothing verified.
pub(crate) const FAIL_CLOSED: [&str; 1] = ["secure-verify-ca-secret"];

/// `secure-verify-ca-secret`.
pub static SECURE_VERIFY_CA_SECRET: Key<Option<SecretName>> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "secure-verify-ca-secret",
    scope: Scope::Backend,
    default: "",
    accepted_values: "a Secret name such as `backend-ca`, or `namespace/name` in the backend's own namespace; empty for none",
    parse: parse_secret_name,
    doc: "A Secret whose `ca.crt` holds the CA bundle the servers' certificates must chain to (`verify required`). Without it, TLS toward the servers is not verified. A Secret that cannot be used, or a value that is not a Secret name, is reported and the backend (when it speaks TLS to its servers) gets no servers until it is fixed. Set `secure-sni` or `secure-verify-hostname` to check the certificate's name too.",
    applied: Applied::Reload,
    differs: "haproxy-ingress also reads a `ca.crl`, accepts `file://` paths and Secrets of other namespaces; portcullis reads only `ca.crt` of a Secret of the backend's namespace, so that an annotation cannot make HAProxy read any file of the controller's host.",
};
/// `secure-crt-secret`.
pub static SECURE_CRT_SECRET: Key<Option<SecretName>> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "secure-crt-secret",
    scope: Scope::Backend,
    default: "",
    accepted_values: "a Secret name such as `backend-client`, or `namespace/name` in the backend's own namespace; empty for none",
    parse: parse_secret_name,
    doc: "A TLS Secret (`tls.crt`, `tls.key`) whose certificate is presented to servers that ask for a client certificate.",
    applied: Applied::Reload,
    differs: "haproxy-ingress also accepts `file://` paths and Secrets of other namespaces; portcullis reads only Secrets of the backend's namespace.",
};
/// `secure-sni`.
pub static SECURE_SNI: Key<Option<SniSetting>> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "secure-sni",
    scope: Scope::Backend,
    default: "",
    accepted_values: "`sni` (the client's SNI), `host` (the request's Host header) or a host name such as `api.internal`; empty for none",
    parse: parse_sni,
    doc: "The name sent as SNI in the TLS handshake with the servers; with `secure-verify-ca-secret` the certificate must also carry that name.",
    applied: Applied::Reload,
    differs: "",
};
/// `secure-verify-hostname`.
pub static SECURE_VERIFY_HOSTNAME: Key<Option<DnsName>> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "secure-verify-hostname",
    scope: Scope::Backend,
    default: "",
    accepted_values: "a host name such as `api.internal`; empty for none",
    parse: parse_optional_dns_name,
    doc: "The name the servers' certificates must carry, without sending it as SNI (`verifyhost`); used only with `secure-verify-ca-secret`.",
    applied: Applied::Reload,
    differs: "",
};

fn parse_backend_protocol(text: &str) -> Result<BackendProtocol, String> {
    let (protocol, tls) = match text.trim().to_ascii_lowercase().as_str() {
        "h1" | "http" => (Protocol::Http1, false),
        "h1-ssl" | "https" => (Protocol::Http1, true),
        "h2" | "grpc" => (Protocol::Http2, false),
        "h2-ssl" | "grpcs" => (Protocol::Http2, true),
        _ => {
            return Err(format!(
                "'{}' is not one of h1, h1-ssl, h2, h2-ssl (or http, https, grpc, grpcs)",
                text.trim().escape_debug()
            ));
        }
    };
    Ok(BackendProtocol { protocol, tls })
}

pub(super) fn parse_secret_name(text: &str) -> Result<Option<SecretName>, String> {
    let text = text.trim();
    if text.is_empty() {
        return Ok(None);
    }
    let (namespace, name) = match text.split_once('/') {
        Some((namespace, name)) => (Some(namespace), name),
        None => (None, text),
    };
    // Kubernetes object names: lowercase DNS subdomains.
    let valid = |part: &str| {
        (1..=253).contains(&part.len())
            && part
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'-' | b'.'))
            && part.starts_with(|c: char| c.is_ascii_alphanumeric())
            && part.ends_with(|c: char| c.is_ascii_alphanumeric())
    };
    if !namespace.is_none_or(valid) || !valid(name) {
        return Err(format!(
            "'{}' is not a Secret name, or namespace/name",
            text.escape_debug()
        ));
    }
    Ok(Some(SecretName {
        namespace: namespace.map(str::to_owned),
        name: name.to_owned(),
    }))
}

fn parse_sni(text: &str) -> Result<Option<SniSetting>, String> {
    match text.trim() {
        "" => Ok(None),
        "sni" => Ok(Some(SniSetting::FromClient)),
        "host" => Ok(Some(SniSetting::FromHost)),
        name => DnsName::parse(name).map(|n| Some(SniSetting::Fixed(n))),
    }
}

fn parse_optional_dns_name(text: &str) -> Result<Option<DnsName>, String> {
    match text.trim() {
        "" => Ok(None),
        name => DnsName::parse(name).map(Some),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backend_protocol_takes_haproxy_ingress_s_names_and_aliases() {
        let parsed = |t: &str| (BACKEND_PROTOCOL.parse)(t);
        assert_eq!(
            parsed("H2-SSL"),
            Ok(BackendProtocol {
                protocol: Protocol::Http2,
                tls: true
            })
        );
        assert_eq!(parsed("grpc"), parsed("h2"));
        assert_eq!(parsed("https"), parsed("h1-ssl"));
        assert_eq!(
            BACKEND_PROTOCOL.default_value(),
            BackendProtocol {
                protocol: Protocol::Http1,
                tls: false
            }
        );
        assert_eq!(
            parsed("fcgi"),
            Err("'fcgi' is not one of h1, h1-ssl, h2, h2-ssl (or http, https, grpc, grpcs)".into())
        );
    }

    #[test]
    fn secrets_sni_and_hostnames_are_checked() {
        assert_eq!(SECURE_VERIFY_CA_SECRET.default_value(), None);
        assert_eq!(
            (SECURE_CRT_SECRET.parse)("web/client"),
            Ok(Some(SecretName {
                namespace: Some("web".into()),
                name: "client".into()
            }))
        );
        assert_eq!(
            (SECURE_VERIFY_CA_SECRET.parse)("ca bundle"),
            Err("'ca bundle' is not a Secret name, or namespace/name".into())
        );
        assert_eq!((SECURE_SNI.parse)("host"), Ok(Some(SniSetting::FromHost)));
        assert_eq!((SECURE_SNI.parse)("sni"), Ok(Some(SniSetting::FromClient)));
        assert!(matches!(
            (SECURE_SNI.parse)("API.internal"),
            Ok(Some(SniSetting::Fixed(name))) if name.to_string() == "api.internal"
        ));
        assert_eq!(
            (SECURE_SNI.parse)("a.b verify none"),
            Err("'a.b verify none' is not a DNS host name".into())
        );
        assert_eq!(
            (SECURE_VERIFY_HOSTNAME.parse)("x\ny"),
            Err("'x\\ny' is not a DNS host name".into())
        );
        assert!(!SECURE_BACKENDS.default_value());
    }
}
