//! Keys haproxy-ingress or ingress-nginx users set that portcullis does not implement:
//! named and explained when set, rather than reported as unknown or silently ignored.

/// A key, or a family of keys by prefix, and why it is not supported.
#[derive(Debug, Clone, Copy)]
pub struct Unsupported {
    /// The key's name, or the family's prefix (ending in `-`).
    pub name: &'static str,
    /// Whether `name` is a prefix.
    pub prefix: bool,
    /// Why, and what happens instead.
    pub why: &'static str,
}

const NO_WAF: &str = "portcullis has no web application firewall (no ModSecurity or Coraza agent over SPOE): requests are not inspected, and the key is ignored";

/// Every unsupported key or family.
pub static UNSUPPORTED_KEYS: &[Unsupported] = &[
    Unsupported {
        name: "waf",
        prefix: false,
        why: NO_WAF,
    },
    Unsupported {
        name: "waf-mode",
        prefix: false,
        why: NO_WAF,
    },
    Unsupported {
        name: "modsecurity-",
        prefix: true,
        why: NO_WAF,
    },
    Unsupported {
        name: "enable-modsecurity",
        prefix: false,
        why: NO_WAF,
    },
    Unsupported {
        name: "enable-owasp-core-rules",
        prefix: false,
        why: NO_WAF,
    },
    Unsupported {
        name: "config-",
        prefix: true,
        why: "raw HAProxy configuration snippets (config-backend, config-frontend, config-defaults, config-global, ...) are not taken: a snippet could reach every tenant's traffic and files, and no rendered file could be checked for it; ask for the setting as a key of its own",
    },
    Unsupported {
        name: "session-cookie-shared",
        prefix: false,
        why: "one cookie naming every domain of a backend is refused by today's browsers (haproxy-ingress deprecates it); use session-cookie-domain",
    },
    Unsupported {
        name: "cert-signer",
        prefix: false,
        why: "portcullis issues no ACME certificates; cert-manager (or any issuer) writing the Ingress's TLS Secret is read as usual, and until it exists the host is served with the default certificate",
    },
    Unsupported {
        name: "ssl-fingerprint-lower",
        prefix: false,
        why: "the client certificate's fingerprint goes to the backend as `X-SSL-Client-SHA1` in uppercase hex, always; the key is ignored",
    },
    Unsupported {
        name: "ssl-fingerprint-sha2-bits",
        prefix: false,
        why: "only the SHA-1 fingerprint (`X-SSL-Client-SHA1`) is sent; the key is ignored",
    },
    Unsupported {
        name: "backend-server-naming",
        prefix: false,
        why: "servers are named by their endpoint (`<address>_<port>`), which is what the runtime API, the logs and the metrics show; the key is ignored",
    },
    Unsupported {
        name: "dynamic-scaling",
        prefix: false,
        why: "servers are added and deleted at run time as endpoints change (HAProxy's `add server` and `del server`), so there are no empty slots to size; the key is ignored",
    },
    Unsupported {
        name: "slots-min-free",
        prefix: false,
        why: "servers are added and deleted at run time as endpoints change, so there are no empty slots to keep; the key is ignored",
    },
    Unsupported {
        name: "backend-server-slots-increment",
        prefix: false,
        why: "servers are added and deleted at run time as endpoints change, so there are no empty slots to add; the key is ignored",
    },
    Unsupported {
        name: "https-to-http-port",
        prefix: false,
        why: "the older name of `fronting-proxy-port`; the key is ignored, set `fronting-proxy-port` instead",
    },
    Unsupported {
        name: "http-passthrough",
        prefix: false,
        why: "every plain HTTP request goes through the same routing, redirects and HSTS rules; the key is ignored",
    },
    Unsupported {
        name: "http-frontend",
        prefix: false,
        why: "every Ingress is served by the one HTTP and one HTTPS frontend; the key is ignored",
    },
    Unsupported {
        name: "auth-external-placement",
        prefix: false,
        why: "the external authentication of `auth-url` is asked before the request is routed to its backend, always; the key is ignored",
    },
    Unsupported {
        name: "agent-check-",
        prefix: true,
        why: "HAProxy agent checks are not configured; a server's health is checked by the `health-check-*` keys",
    },
    Unsupported {
        name: "initial-weight",
        prefix: false,
        why: "a server's weight is HAProxy's default, or what blue-green deployment gives it; the key is ignored",
    },
    Unsupported {
        name: "assign-backend-server-id",
        prefix: false,
        why: "servers get HAProxy's own ids; a hash-based `balance-algorithm` stays stable because servers are named by their endpoint; the key is ignored",
    },
    Unsupported {
        name: "service-upstream",
        prefix: false,
        why: "a Service's endpoints are always its servers; its cluster IP as the one server is not offered, and the key is ignored",
    },
    Unsupported {
        name: "ssl-always-add-https",
        prefix: false,
        why: "a host is served over HTTPS only when an Ingress lists it under `tls`, as the Ingress specification says; the key is ignored",
    },
    Unsupported {
        name: "ssl-always-follow-redirect",
        prefix: false,
        why: "a host is served over HTTPS only when an Ingress lists it under `tls`, so `ssl-redirect` always applies to it; the key is ignored",
    },
    Unsupported {
        name: "ssl-ciphers-backend",
        prefix: false,
        why: "connections to TLS backends use HAProxy's default ciphers; the key is ignored",
    },
    Unsupported {
        name: "ssl-cipher-suites-backend",
        prefix: false,
        why: "connections to TLS backends use HAProxy's default TLS 1.3 cipher suites; the key is ignored",
    },
    Unsupported {
        name: "ssl-options-backend",
        prefix: false,
        why: "connections to TLS backends use HAProxy's default TLS options; the key is ignored",
    },
    Unsupported {
        name: "var-namespace",
        prefix: false,
        why: "the JSON access log (`syslog-format`) names each request's backend, which holds its namespace; the key is ignored",
    },
    Unsupported {
        name: "source-address-intf",
        prefix: false,
        why: "outgoing connections take the source address the operating system chooses; the key is ignored",
    },
    Unsupported {
        name: "fcgi-app",
        prefix: false,
        why: "backends are spoken to in HTTP/1.1 or HTTP/2 only (see `backend-protocol`); FastCGI is not offered, and the key is ignored",
    },
    Unsupported {
        name: "peers-table",
        prefix: false,
        why: "HAProxy peers are not configured: stick tables (`limit-rps`, `limit-connections`) count per HAProxy; the key is ignored",
    },
];

/// Why a key is not supported, when it is one of those.
pub(crate) fn why(name: &str) -> Option<&'static str> {
    UNSUPPORTED_KEYS
        .iter()
        .find(|key| {
            if key.prefix {
                name.starts_with(key.name)
            } else {
                name == key.name
            }
        })
        .map(|key| key.why)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waf_and_modsecurity_keys_are_known_as_unsupported() {
        for name in [
            "waf",
            "waf-mode",
            "modsecurity-endpoints",
            "modsecurity-use-coraza",
            "enable-modsecurity",
            "enable-owasp-core-rules",
        ] {
            assert_eq!(why(name), Some(NO_WAF), "{name}");
        }
        assert_eq!(why("wafer"), None);
        assert_eq!(why("timeout-server"), None);
    }

    #[test]
    fn configuration_snippets_are_known_as_unsupported() {
        for name in [
            "config-backend",
            "config-frontend",
            "config-defaults",
            "config-global",
        ] {
            assert!(
                why(name).is_some_and(|why| why.contains("snippets")),
                "{name}"
            );
        }
        assert_eq!(why("configuration"), None);
    }
}
